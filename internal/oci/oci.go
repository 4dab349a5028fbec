// Package oci pushes plugin modules to OCI registries and pulls them back,
// in the layout of the CNCF Wasm OCI artifact that other Wasm hosts use
// (wasmCloud's `wash push`, Spin's `spin registry push` read the same): an
// OCI image manifest whose config has the media type
// application/vnd.wasm.config.v0+json and whose one layer is the module,
// application/wasm. The registry client is oras-go v2; registry
// credentials come from a docker config file (`docker login`'s) or a user
// name and a password file.
package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/cmdhost/cmdhost/internal/secret"
)

// The media types of a Wasm OCI artifact, and of the layer that carries a
// module's signature file beside it (cmdhost plugin sign; other hosts
// ignore a layer of a type they do not know).
const (
	ConfigMediaType    = "application/vnd.wasm.config.v0+json"
	LayerMediaType     = "application/wasm"
	SignatureMediaType = "application/vnd.cmdhost.signature.v1+base64"
)

// maxSignature bounds the signature layer a pull takes.
const maxSignature = 4 << 10

// Scheme is the prefix of a module reference in the CLI:
// oci://REGISTRY/REPO[:TAG|@sha256:…].
const Scheme = "oci://"

// maxManifest bounds the manifest a pull reads: one config and one layer
// fit in a few hundred bytes.
const maxManifest = 1 << 20

// Config says how to reach a registry.
type Config struct {
	// DockerConfig is a docker config file (~/.docker/config.json, as
	// `docker login` writes it, credential helpers included) to take the
	// registry's credentials from; "" with no Username: none (anonymous).
	DockerConfig string
	// Username and PasswordFile are the registry's user and the file of
	// its password (read at each connection: a rotated file counts),
	// used instead of DockerConfig.
	Username, PasswordFile string
	// PlainHTTP talks HTTP to the registry instead of HTTPS (a registry on
	// loopback for tests or development).
	PlainHTTP bool
	// MaxBytes bounds the module a pull takes; 0: no bound but the
	// registry's.
	MaxBytes int64
}

// Pushed is what Push put into the registry.
type Pushed struct {
	// Reference is the manifest's reference by digest,
	// REGISTRY/REPO@sha256:…, the one that pins this version.
	Reference string
	// Manifest is the manifest's digest, Module the module's (the layer's),
	// both "sha256:…".
	Manifest, Module string
}

// config is the artifact's config, as the Wasm OCI artifact layout has it.
type config struct {
	Created      time.Time `json:"created"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	LayerDigests []string  `json:"layerDigests"`
}

// repository opens ref (REGISTRY/REPO[:TAG|@DIGEST], no scheme) with cfg's
// credentials.
func repository(ref string, cfg Config) (*remote.Repository, error) {
	repo, err := remote.NewRepository(ref)
	if err != nil {
		return nil, fmt.Errorf("registry reference %q: %w (want REGISTRY/REPO[:TAG|@sha256:…], e.g. registry.example:5000/plugins/greet:1.0)", ref, err)
	}
	repo.PlainHTTP = cfg.PlainHTTP
	client := &auth.Client{Client: retry.DefaultClient, Cache: auth.NewCache(), Header: http.Header{"User-Agent": {"cmdhost"}}}
	switch {
	case cfg.Username != "" && cfg.DockerConfig != "":
		return nil, errors.New("registry credentials: a docker config file or a user and password file, not both")
	case cfg.Username != "":
		user, file, host := cfg.Username, cfg.PasswordFile, repo.Reference.Registry
		client.Credential = func(_ context.Context, hostport string) (auth.Credential, error) {
			if hostport != host {
				return auth.EmptyCredential, nil
			}
			pw, err := secret.ReadFile(file)
			if err != nil {
				return auth.EmptyCredential, fmt.Errorf("registry password: %w", err)
			}
			return auth.Credential{Username: user, Password: pw}, nil
		}
	case cfg.DockerConfig != "":
		store, err := credentials.NewStore(cfg.DockerConfig, credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("docker config %s: %w", cfg.DockerConfig, err)
		}
		client.Credential = credentials.Credential(store)
	}
	repo.Client = client
	return repo, nil
}

// Push pushes the module bin to ref (REGISTRY/REPO:TAG, or no tag for
// "latest") as a Wasm OCI artifact, with its signature file sig as a
// second layer when not nil, and tags it.
func Push(ctx context.Context, ref string, bin, sig []byte, cfg Config) (Pushed, error) {
	ref = strings.TrimPrefix(ref, Scheme)
	repo, err := repository(ref, cfg)
	if err != nil {
		return Pushed{}, err
	}
	tag := repo.Reference.Reference
	switch {
	case tag == "":
		tag = "latest"
	case strings.Contains(tag, ":"):
		return Pushed{}, fmt.Errorf("registry reference %q: push to a tag (REPO:TAG), not to a digest", ref)
	}
	layer, err := oras.PushBytes(ctx, repo, LayerMediaType, bin)
	if err != nil {
		return Pushed{}, fmt.Errorf("pushing the module to %s: %w", ref, hint(err))
	}
	cfgJSON, err := json.Marshal(config{Created: time.Now().UTC(), Architecture: "wasm", OS: "wasip1", LayerDigests: []string{layer.Digest.String()}})
	if err != nil {
		return Pushed{}, err
	}
	cfgDesc, err := oras.PushBytes(ctx, repo, ConfigMediaType, cfgJSON)
	if err != nil {
		return Pushed{}, fmt.Errorf("pushing the artifact's config to %s: %w", ref, err)
	}
	layers := []ocispec.Descriptor{layer}
	if sig != nil {
		sigDesc, err := oras.PushBytes(ctx, repo, SignatureMediaType, sig)
		if err != nil {
			return Pushed{}, fmt.Errorf("pushing the module's signature to %s: %w", ref, err)
		}
		layers = append(layers, sigDesc)
	}
	manifest, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "",
		oras.PackManifestOptions{Layers: layers, ConfigDescriptor: &cfgDesc})
	if err != nil {
		return Pushed{}, fmt.Errorf("pushing the manifest to %s: %w", ref, err)
	}
	if err := repo.Tag(ctx, manifest, tag); err != nil {
		return Pushed{}, fmt.Errorf("tagging %s: %w", ref, err)
	}
	return Pushed{Reference: repo.Reference.Registry + "/" + repo.Reference.Repository + "@" + manifest.Digest.String(),
		Manifest: manifest.Digest.String(), Module: layer.Digest.String()}, nil
}

// hint adds to a registry's refusal for want of credentials what gives
// them, and to an HTTPS client's failure on a plain-HTTP registry the
// flag that talks HTTP.
func hint(err error) error {
	switch {
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return fmt.Errorf("%w: the registry asks for credentials (a docker config file with them, or a user name and password file)", err)
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("%w: the registry talks plain HTTP: give --plain-http (only for a registry you reach on a trusted network, such as loopback)", err)
	}
	return err
}

// Pulled is a module Pull took from a registry.
type Pulled struct {
	Module []byte
	// Signature is the module's signature file, from the artifact's
	// signature layer; nil when it has none.
	Signature []byte
	// Name is the repository's last path element: the plugin's name by
	// default.
	Name string
	// Manifest is the manifest's digest, "sha256:…".
	Manifest string
}

// Pull fetches the module of the Wasm OCI artifact at ref
// (REGISTRY/REPO[:TAG|@sha256:…], oci:// allowed; no tag: "latest"). The
// manifest must be an OCI image manifest with the Wasm config media type
// and one application/wasm layer; the layer is checked against its digest
// and size as it is read, and refused over cfg.MaxBytes before it is.
func Pull(ctx context.Context, ref string, cfg Config) (Pulled, error) {
	ref = strings.TrimPrefix(ref, Scheme)
	repo, err := repository(ref, cfg)
	if err != nil {
		return Pulled{}, err
	}
	tag := repo.Reference.Reference
	if tag == "" {
		tag = "latest"
	}
	desc, raw, err := oras.FetchBytes(ctx, repo, tag, oras.FetchBytesOptions{MaxBytes: maxManifest})
	if err != nil {
		return Pulled{}, fmt.Errorf("fetching %s: %w", ref, hint(err))
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return Pulled{}, fmt.Errorf("%s is a %s, not an OCI image manifest of a Wasm module", ref, desc.MediaType)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Pulled{}, fmt.Errorf("%s: its manifest: %w", ref, err)
	}
	if m.Config.MediaType != ConfigMediaType {
		return Pulled{}, fmt.Errorf("%s is not a Wasm OCI artifact: its config is %s, not %s", ref, m.Config.MediaType, ConfigMediaType)
	}
	var layer, sigLayer *ocispec.Descriptor
	for i := range m.Layers {
		switch m.Layers[i].MediaType {
		case LayerMediaType:
			if layer != nil {
				return Pulled{}, fmt.Errorf("%s has more than one %s layer: which is the module?", ref, LayerMediaType)
			}
			layer = &m.Layers[i]
		case SignatureMediaType:
			if sigLayer != nil { // one could be checked and the other kept: neither is
				return Pulled{}, fmt.Errorf("%s has more than one %s layer: which is the module's signature?", ref, SignatureMediaType)
			}
			sigLayer = &m.Layers[i]
		}
	}
	switch {
	case layer == nil:
		return Pulled{}, fmt.Errorf("%s has no %s layer", ref, LayerMediaType)
	case cfg.MaxBytes > 0 && layer.Size > cfg.MaxBytes:
		return Pulled{}, fmt.Errorf("%s: the module is %d bytes, more than the limit of %d", ref, layer.Size, cfg.MaxBytes)
	case layer.Digest.Algorithm() != digest.SHA256:
		return Pulled{}, fmt.Errorf("%s: the module's digest is %s, not sha256", ref, layer.Digest.Algorithm())
	}
	bin, err := content.FetchAll(ctx, repo, *layer)
	if err != nil {
		return Pulled{}, fmt.Errorf("fetching the module of %s: %w", ref, err)
	}
	var sig []byte
	if sigLayer != nil {
		if sigLayer.Size > maxSignature {
			return Pulled{}, fmt.Errorf("%s: its signature layer is %d bytes, more than a signature", ref, sigLayer.Size)
		}
		if sig, err = content.FetchAll(ctx, repo, *sigLayer); err != nil {
			return Pulled{}, fmt.Errorf("fetching the signature of %s: %w", ref, err)
		}
	}
	name := repo.Reference.Repository
	name = name[strings.LastIndex(name, "/")+1:]
	return Pulled{Module: bin, Signature: sig, Name: name, Manifest: desc.Digest.String()}, nil
}
