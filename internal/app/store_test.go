package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStoreSettings(t *testing.T) {
	cases := []struct {
		name, config, dotenv string
		env                  map[string]string
		wantURL, wantPW      string
		wantErr              string
	}{
		{name: "unset: state.db", config: "model: {default: m}\n"},
		{name: "state.db named", config: "gateway: {store: state.db}\n"},
		{name: "a URL", config: "gateway: {store: 'postgres://hermes@db/hermes'}\n", wantURL: "postgres://hermes@db/hermes"},
		{name: ".env's HERMES_PG_PASSWORD first", config: "gateway: {store: 'postgres://hermes@db/hermes'}\n",
			dotenv: "PGPASSWORD=second\nHERMES_PG_PASSWORD=first\n", env: map[string]string{"HERMES_PG_PASSWORD": "env"},
			wantURL: "postgres://hermes@db/hermes", wantPW: "first"},
		{name: ".env's PGPASSWORD over the environment", config: "gateway: {store: 'postgres://hermes@db/hermes'}\n",
			dotenv: "PGPASSWORD=dotenv\n", env: map[string]string{"HERMES_PG_PASSWORD": "env"}, wantURL: "postgres://hermes@db/hermes", wantPW: "dotenv"},
		{name: "the environment", config: "gateway: {store: 'postgresql://hermes@db/hermes'}\n",
			env: map[string]string{"PGPASSWORD": "env"}, wantURL: "postgresql://hermes@db/hermes", wantPW: "env"},
		{name: "not a URL", config: "gateway: {store: /var/lib/hermes.db}\n", wantErr: `gateway.store "/var/lib/hermes.db" is not a postgres:// URL`},
		{name: "not a string", config: "gateway: {store: 5432}\n", wantErr: "gateway.store is not a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hh := filepath.Join(t.TempDir(), ".hermes")
			if err := os.MkdirAll(hh, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(hh, "config.yaml"), []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(hh, ".env"), []byte(tc.dotenv), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HERMES_HOME": hh}
			for k, v := range tc.env {
				env[k] = v
			}
			f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &strings.Builder{}},
				Env: func(k string) string { return env[k] }, Clock: time.Now}
			defer f.Close()
			u, err := f.storeURL()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || u != tc.wantURL {
				t.Fatalf("storeURL = %q, %v; want %q", u, err, tc.wantURL)
			}
			if pw, err := f.pgPassword(); err != nil || pw != tc.wantPW {
				t.Fatalf("pgPassword = %q, %v; want %q", pw, err, tc.wantPW)
			}
		})
	}
}
