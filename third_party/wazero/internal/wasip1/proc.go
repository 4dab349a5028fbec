package wasip1

const (
	ProcExitName  = "proc_exit"
	ProcRaiseName = "proc_raise"
)
