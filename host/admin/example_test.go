package admin_test

import (
	"context"
	"fmt"
	"log"
	"net/url"
	"os"

	"github.com/cmdhost/cmdhost/host/admin"
)

// A tool lists the plugins of the host host-1 and reloads one of them.
func Example() {
	broker, _ := url.Parse("mqtt://localhost:1883")
	ctx := context.Background()
	c, err := admin.Dial(ctx, admin.ClientConfig{Broker: broker, ExecutorID: "host-1", Token: os.Getenv("CMDHOST_ADMIN_TOKEN")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	views, err := c.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range views {
		fmt.Println(v.Name, v.State, v.Commands)
	}
	if _, err := c.Reload(ctx, "echo"); err != nil {
		log.Fatal(err) // a *admin.HostError with StatusForbidden: a wrong token
	}
}
