module github.com/cmdhost/cmdhost/sdk

go 1.26.0

require github.com/cmdhost/cmdhost/abi v0.0.0-00010101000000-000000000000

replace github.com/cmdhost/cmdhost/abi => ../abi

// Not Go: the AssemblyScript SDK's npm packages, which the cmdhost
// repository's make installs there.
ignore ./assemblyscript/node_modules
