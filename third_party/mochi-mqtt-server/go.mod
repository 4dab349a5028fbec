module github.com/mochi-mqtt/server/v2

go 1.26.0

require (
	github.com/gorilla/websocket v1.5.3
	github.com/rs/xid v1.4.0
	gopkg.in/yaml.v3 v3.0.1
)
