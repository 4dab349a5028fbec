package plugins_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cmdhost/cmdhost/abi"
	"github.com/cmdhost/cmdhost/internal/wasm"
	"github.com/cmdhost/cmdhost/plugins"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "plugins")
	defer os.RemoveAll(dir)
	// Install: write a temporary file, then rename it into place.
	bin, _ := os.ReadFile("../testdata/plugins/wat-echo.wasm")
	_ = os.WriteFile(filepath.Join(dir, "wat-echo.wasm.tmp"), bin, 0o644)
	_ = os.Rename(filepath.Join(dir, "wat-echo.wasm.tmp"), filepath.Join(dir, "wat-echo.wasm"))

	engine, _ := wasm.NewEngine(wasm.Config{})
	defer engine.Close(ctx)
	m := plugins.NewManager(plugins.Config{Dir: dir, Engine: engine})
	defer m.Close(ctx)
	m.OnChange(func() { fmt.Println("commands now:", len(m.Commands())) })
	for _, err := range m.LoadAll(ctx) {
		fmt.Println("problem:", err)
	}
	// A host runs m.Watch(ctx) in a goroutine from here on.

	resp, err := m.Invoke(ctx, &abi.Request{Command: "wat-echo", Payload: []byte("hello")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s\n", resp.Payload)
	for _, s := range m.Status() {
		fmt.Println(s.Name, s.State, s.Commands)
	}
	// Output:
	// commands now: 1
	// hello
	// wat-echo serving [wat-echo]
}
