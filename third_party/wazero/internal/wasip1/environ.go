package wasip1

const (
	EnvironGetName      = "environ_get"
	EnvironSizesGetName = "environ_sizes_get"
)
