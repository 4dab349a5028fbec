package oci

import (
	"context"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/cmdhost/cmdhost/internal/oci/ocitest"
)

// An artifact with two signature layers (which would be checked, which
// kept?) or two module layers is refused at the pull, with an error that
// says why.
func TestPullRefusesAmbiguousLayers(t *testing.T) {
	reg := ocitest.Start(t)
	ctx := context.Background()
	cfg := Config{Username: reg.User, PasswordFile: reg.PasswordFile, PlainHTTP: true}
	for _, c := range []struct {
		tag, want string
		media     []string
	}{
		{"two-sigs", "more than one " + SignatureMediaType + " layer", []string{LayerMediaType, SignatureMediaType, SignatureMediaType}},
		{"two-modules", "more than one " + LayerMediaType + " layer", []string{LayerMediaType, LayerMediaType}},
	} {
		ref := reg.Host + "/p/ambiguous:" + c.tag
		repo, err := repository(ref, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var layers []ocispec.Descriptor
		for i, mt := range c.media {
			d, err := oras.PushBytes(ctx, repo, mt, []byte{0, 'a', 's', 'm', 1, 0, 0, 0, byte(i)})
			if err != nil {
				t.Fatal(err)
			}
			layers = append(layers, d)
		}
		cfgDesc, err := oras.PushBytes(ctx, repo, ConfigMediaType, []byte("{}"))
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{Layers: layers, ConfigDescriptor: &cfgDesc})
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, manifest, c.tag); err != nil {
			t.Fatal(err)
		}
		if _, err := Pull(ctx, ref, cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("pull of %s: %v, want %q", c.tag, err, c.want)
		}
	}
}
