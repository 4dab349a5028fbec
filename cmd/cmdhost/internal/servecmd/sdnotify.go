package servecmd

import (
	"net"
	"os"
)

// notifySystemd sends a state to systemd's notification socket
// ($NOTIFY_SOCKET, set for a Type=notify unit): READY=1 once the host
// serves, STOPPING=1 when it begins its graceful stop. Without the
// variable it does nothing; a failed send is not the host's problem and
// is ignored (systemd then times the start out and says so).
func notifySystemd(state string) {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return
	}
	if path[0] == '@' { // an abstract socket
		path = "\x00" + path[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = conn.Write([]byte(state))
}
