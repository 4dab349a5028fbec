//go:build !(amd64 || arm64)

package platform

const CpuFeatures CpuFeatureFlags = 0
