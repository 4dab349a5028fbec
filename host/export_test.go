package host

// CloseState closes s's state store under it, as a store that can no
// longer write (tests of readiness).
func CloseState(s *Server) error { return s.state.Close() }
