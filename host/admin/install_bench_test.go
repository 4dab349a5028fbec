package admin_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/host"
	"github.com/cmdhost/cmdhost/host/admin"
	"github.com/cmdhost/cmdhost/internal/testkit"
	"github.com/cmdhost/cmdhost/internal/testkit/hosttest"
)

// BenchmarkInstall measures a remote install of a 4 MiB module (the WAT
// echo with a 4 MiB custom section: its load costs little, so the
// transfer shows) on a host of the embedded broker, whose packets are
// limited to the size each sub-benchmark names: one packet at 8 MiB,
// chunks below. Each install is a new version (another custom section),
// served, the one before kept for a rollback.
func BenchmarkInstall(b *testing.B) {
	testkit.Needs(b, testkit.Plugins)
	wat, err := os.ReadFile(filepath.Join(pluginDir, "wat-echo.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	const padding = 4 << 20
	for _, packet := range []int{8 << 20, 1 << 20, 256 << 10, 64 << 10} {
		b.Run(fmt.Sprintf("packet=%dKiB", packet>>10), func(b *testing.B) {
			srv := hosttest.Serve(b, host.Config{
				PluginsDir: b.TempDir(),
				ExecutorID: "bench-install",
				CacheDir:   testkit.CacheDir(),
				Broker:     host.BrokerConfig{MaxRequestBytes: packet},
				Embedded:   host.EmbeddedConfig{Listen: "127.0.0.1:0"},
				Admin:      host.AdminConfig{Token: "secret"},
			})
			ctx := context.Background()
			c, err := admin.Dial(ctx, admin.ClientConfig{Broker: srv.Broker(), ExecutorID: "bench-install", Token: "secret", Timeout: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			// A custom section: id 0, size (LEB128), name "pad", content.
			module := func() []byte {
				content := make([]byte, padding)
				_, _ = rand.Read(content[:64])
				size := 1 + 3 + len(content)
				out := append([]byte(nil), wat...)
				out = append(out, 0)
				for v := uint32(size); ; {
					if v < 0x80 {
						out = append(out, byte(v))
						break
					}
					out = append(out, byte(v&0x7f|0x80))
					v >>= 7
				}
				return append(append(out, 3, 'p', 'a', 'd'), content...)
			}
			mods := make([][]byte, b.N)
			for i := range mods {
				mods[i] = module()
			}
			b.SetBytes(int64(len(mods[0])))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, err := c.Install(ctx, "padded", mods[i], nil)
				if err != nil || !v.Served {
					b.Fatalf("install: %+v, %v", v, err)
				}
			}
		})
	}
}
