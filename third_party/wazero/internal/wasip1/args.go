package wasip1

const (
	ArgsGetName      = "args_get"
	ArgsSizesGetName = "args_sizes_get"
)
