package rpc

import "github.com/cmdhost/cmdhost/internal/session"

// What a response topic may be (PROTOCOL.md "Topics"). A request names the
// topic its reply goes to, and the executor publishes there at QoS 1,
// holding one slot of the broker's Receive Maximum until the broker acks
// it. So a topic an ordinary client may not publish to is refused before
// anything runs: a broker answers a PUBLISH to it with an error, drops the
// client, or (mochi, for `$SYS/…`) drops the PUBLISH silently and never
// acks it. Such a request cannot be answered on its own topic, so, as the
// protocol says of an invalid response topic, it gets no response and is
// still acked; the executor logs who sent it and why it was refused, and
// counts it (SessionStats.ResponseTopicsRefused). What a client may
// publish to is the session's to say (session.ResponseTopicProblem).

// responseTopicProblem says why s cannot be a response topic, or returns
// "" when it can.
func responseTopicProblem(s string) string { return session.ResponseTopicProblem(s) }

// refuseResponseTopic counts and logs a request refused for its response
// topic; it is acked and not answered (its caller finishes it).
func (e *Executor) refuseResponseTopic(in *incoming, problem string) {
	e.topicsRefused.Add(1)
	ok, suppressed := e.topicRefusals.Allow(e.cfg.Clock.Now())
	if !ok {
		return
	}
	var srcID, clientID string
	if in.pub.Properties != nil {
		srcID = in.pub.Properties.User.Get(propSourceID)
		if e.cfg.TrustBrokerClientID { // the embedded broker's word: who really sent it
			clientID = in.pub.Properties.User.Get(BrokerClientIDProperty)
		}
	}
	e.log.Warn("request refused for its response topic: not answered, acked", "command", in.route.cmd.Name,
		"topic", cleanText(in.pub.Topic, 128), "response_topic", cleanText(in.responseTopic, 128),
		"src_id", cleanText(srcID, 128), "client_id", cleanText(clientID, 128), "why", problem, "refusals_not_logged", suppressed)
}
