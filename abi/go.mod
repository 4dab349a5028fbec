module github.com/cmdhost/cmdhost/abi

go 1.26.0
