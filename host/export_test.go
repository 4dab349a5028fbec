package host

// CloseState closes s's state store under it, as a store that can no
// longer write (tests of readiness).
func CloseState(s *Server) error { return s.state.Close() }

// OutboxTakenOver is how many messages s's outbox took over from
// replicas that read them and did not send them (the outbox in Redis).
func OutboxTakenOver(s *Server) uint64 { return s.outboxStats().TakenOver }
