package servecmd

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/base"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/clitest"
	"github.com/cmdhost/cmdhost/cmd/cmdhost/internal/hostconn"
	"github.com/cmdhost/cmdhost/internal/broker/brokertest"
	"github.com/cmdhost/cmdhost/internal/testkit"
)

// serve and invoke against a secured mosquitto, its password file and
// certificates made by the test: the right credentials work, wrong ones
// are refused at once with the broker's reason and exit status 7, and the
// password is in no output.

const brokerPassword = "Hunter2-cli-s3cr3t"

func TestSecuredBrokerPassword(t *testing.T) {
	u := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{
		PasswordFile: brokertest.WritePasswordFile(t, map[string]string{"cmdhost": brokerPassword}),
	})
	broker := u.String()
	good, wrong := clitest.SecretFile(t, brokerPassword), clitest.SecretFile(t, "not-"+brokerPassword)
	var outputs strings.Builder
	_, stop := clitest.StartServe(t, nil, "--broker", broker, "--username", "cmdhost", "--password-file", good)

	out, errOut, code := clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host", "--username", "cmdhost", "--password-file", good)
	outputs.WriteString(out + errOut)
	if out != "hi" || code != 0 {
		t.Fatalf("invoke with the password: %q %q %d", out, errOut, code)
	}
	t.Run("password from CMDHOST_PASSWORD, user in the URL", func(t *testing.T) {
		t.Setenv("CMDHOST_PASSWORD", brokerPassword)
		out, errOut, code := clitest.Run(t, "plugin", "list", "--broker", "mqtt://cmdhost@"+u.Host, "--executor", "cli-host")
		outputs.WriteString(out + errOut)
		if code != 0 || !strings.Contains(out, "echo") {
			t.Fatalf("plugin list: %q %q %d", out, errOut, code)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		// mosquitto 2.0.11 answers a wrong password 0x87, not 0x86.
		{"wrong password", []string{"--username", "cmdhost", "--password-file", wrong}, hostconn.ExitRefused, "(user cmdhost): not authorized (0x87)"},
		{"anonymous", nil, hostconn.ExitRefused, "not authorized (0x87)"},
		{"password in the URL", []string{"--broker", "mqtt://cmdhost:" + brokerPassword + "@" + u.Host}, base.ExitUsage, "give it in a file (--password-file FILE)"},
		{"password with a '/' in the URL", []string{"--broker", "mqtt://cmdhost:1234/" + brokerPassword + "@" + u.Host}, base.ExitUsage, "give it in a file (--password-file FILE)"},
		{"password file missing", []string{"--username", "cmdhost", "--password-file", "/nonexistent/pw"}, base.ExitUsage, "the password file: secret file: stat /nonexistent/pw: no such file or directory"},
		{"TLS flags on a plain URL", []string{"--tls-ca", good}, base.ExitUsage, "--tls-* flags need a TLS broker URL"},
		{"no such host", []string{"--broker", "mqtt://nosuch.invalid:1883"}, base.ExitNoBroker, "no such host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"invoke", "echo", "-d", "hi", "--executor", "cli-host"}
			if !slices.Contains(c.args, "--broker") { // given twice, --broker names two brokers
				args = append(args, "--broker", broker)
			}
			args = append(args, c.args...)
			out, errOut, code := clitest.RunWithin(t, time.Minute, args...) // a hang guard: the message (the refusal, not connectWait's timeout) shows it stopped at once
			outputs.WriteString(out + errOut)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Fatalf("status %d, stderr %q; want %d and %q", code, errOut, c.code, c.want)
			}
		})
	}
	t.Run("serve refused at start", func(t *testing.T) {
		out, errOut, code := clitest.RunWithin(t, time.Minute, "serve", "--plugins", clitest.Plugins, "--id", "refused-host",
			"--broker", broker, "--username", "cmdhost", "--password-file", wrong)
		outputs.WriteString(out + errOut)
		if code != hostconn.ExitRefused || !strings.Contains(errOut, "cmdhost: ") || !strings.Contains(errOut, "not authorized (0x87)") {
			t.Fatalf("status %d, stderr %q; want %d and the refusal", code, errOut, hostconn.ExitRefused)
		}
	})
	log, _ := stop()
	outputs.WriteString(log)
	if strings.Contains(outputs.String(), brokerPassword) {
		t.Fatalf("the password is in an output:\n%s", outputs.String())
	}
}

func TestSecuredBrokerTLS(t *testing.T) {
	ca := testkit.NewPKI(t)
	cert, key := ca.Server(t, "broker")
	t.Run("server certificate on a private CA", func(t *testing.T) {
		u := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{CertFile: cert, KeyFile: key})
		broker := u.String()
		out, errOut, code := clitest.RunWithin(t, time.Minute, "invoke", "echo", "--broker", broker)
		if code != hostconn.ExitRefused || !strings.Contains(errOut, "x509: certificate signed by unknown authority") || !strings.Contains(errOut, "--tls-ca") {
			t.Fatalf("without the CA: %q %q %d", out, errOut, code)
		}
		clitest.StartServe(t, nil, "--broker", broker, "--tls-ca", ca.CAFile)
		out, errOut, code = clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host", "--tls-ca", ca.CAFile)
		if out != "hi" || code != 0 {
			t.Fatalf("with the CA: %q %q %d", out, errOut, code)
		}
	})
	t.Run("client certificates", func(t *testing.T) {
		u := brokertest.StartMosquittoWith(t, brokertest.MosquittoOptions{CertFile: cert, KeyFile: key, CAFile: ca.CAFile, RequireCertificate: true})
		broker := u.String()
		out, errOut, code := clitest.RunWithin(t, time.Minute, "invoke", "echo", "--broker", broker, "--tls-ca", ca.CAFile)
		if code != hostconn.ExitRefused || !strings.Contains(errOut, "TLS with the broker") || !strings.Contains(errOut, "--tls-cert") {
			t.Fatalf("without a client certificate: %q %q %d", out, errOut, code)
		}
		hostCert, hostKey := ca.Client(t, "cli-host")
		clitest.StartServe(t, nil, "--broker", broker, "--tls-ca", ca.CAFile, "--tls-cert", hostCert, "--tls-key", hostKey)
		clientCert, clientKey := ca.Client(t, "operator")
		out, errOut, code = clitest.Run(t, "invoke", "echo", "-d", "hi", "--broker", broker, "--executor", "cli-host",
			"--tls-ca", ca.CAFile, "--tls-cert", clientCert, "--tls-key", clientKey)
		if out != "hi" || code != 0 {
			t.Fatalf("with a client certificate: %q %q %d", out, errOut, code)
		}
	})
}
