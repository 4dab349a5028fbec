module github.com/cmdhost/cmdhost

go 1.26.0

require github.com/tetratelabs/wazero v1.12.0

require golang.org/x/sys v0.44.0 // indirect
