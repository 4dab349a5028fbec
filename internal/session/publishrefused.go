package session

import "fmt"

// PublishRefusedError is a PUBLISH the broker took but would not pass on:
// at QoS 1, a PUBACK with a reason code of 0x80 or more (MQTT v5
// §3.4.2.1), most often not authorized (0x87), its ACL's answer. paho's
// own error says it in the specification's sentence, without the code or
// the topic; this says both, for the one who reads it to look up the
// broker's ACL for that topic.
type PublishRefusedError struct {
	Topic string
	// Code is the PUBACK reason code, at least 0x80.
	Code byte
}

func (e *PublishRefusedError) Error() string {
	return fmt.Sprintf("the broker refused to publish to %s: %s (0x%02X)", e.Topic, pubackText(e.Code), e.Code)
}

// pubackText is the specification's name of a PUBACK reason code.
func pubackText(code byte) string {
	if code == 0x91 {
		return "packet identifier in use"
	}
	return ConnackText(code) // the codes a PUBACK shares with a CONNACK
}
