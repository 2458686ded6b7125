package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/renameio/v2"

	"github.com/hermes-go/hermes/internal/home"
	"github.com/hermes-go/hermes/internal/jsonx"
	"github.com/hermes-go/hermes/internal/lazyre"
	"github.com/hermes-go/hermes/internal/limits"
	"github.com/hermes-go/hermes/pkg/protocol"
)

// stateQuota caps one plugin's state.json (upstream: 10 MiB).
const stateQuota = 10 << 20

var stateKeyRE = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

func checkStateKey(key string) error {
	if len(key) > 128 || !stateKeyRE.MatchString(key) || strings.Contains(key, "..") {
		return protocol.Errorf(protocol.CodeInvalidArgument,
			"invalid state key %q: use 1-128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit, without '..'", key)
	}
	return nil
}

// statePath is <home>/plugin-data/<namespace>/state.json; category keys become
// "<cat>__<name>" so every plugin gets one flat directory.
func (s *Session) statePath() string {
	ns := strings.ReplaceAll(s.p.ID(), "/", "__")
	return filepath.Join(s.h.opts.Home.PluginDataDir(ns), "state.json")
}

func readState(path string) (map[string]any, error) {
	b, err := home.ReadFileLimit(path, limits.PluginState.MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "read plugin state %s: %v", path, err)
	}
	if err := limits.CheckJSON(b, path, limits.PluginState); err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError, "%v", err)
	}
	st := map[string]any{}
	if len(strings.TrimSpace(string(b))) == 0 {
		return st, nil
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, protocol.Errorf(protocol.CodeRuntimeError,
			"plugin state file %s is malformed (%v): fix or delete it", path, err)
	}
	return st, nil
}

func stateGet(_ context.Context, s *Session, sp protocol.StateGetParams) (any, error) {
	if err := checkStateKey(sp.Key); err != nil {
		return nil, err
	}
	st, err := readState(s.statePath())
	if err != nil {
		return nil, err
	}
	if v, ok := st[sp.Key]; ok {
		return v, nil
	}
	return sp.Default, nil
}

func stateSet(ctx context.Context, s *Session, sp protocol.StateSetParams) (any, error) {
	return nil, s.setState(ctx, sp.Key, jsonx.ExactNumbers(sp.Value))
}

func (s *Session) setState(ctx context.Context, key string, value any) error {
	if err := checkStateKey(key); err != nil {
		return err
	}
	if err := checkStoredValue(value, fmt.Sprintf("the state value %q", key)); err != nil {
		return err
	}
	path := s.statePath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return protocol.Errorf(protocol.CodeRuntimeError, "create plugin data dir: %v", err)
	}
	lock := flock.New(filepath.Join(filepath.Dir(path), ".state.json.lock"))
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if ok, err := lock.TryLockContext(lctx, 20*time.Millisecond); err != nil || !ok {
		return protocol.Errorf(protocol.CodeRuntimeError, "plugin state %s is locked by another process", path)
	}
	defer lock.Unlock()
	st, err := readState(path)
	if err != nil {
		return err
	}
	st[key] = value
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return protocol.Errorf(protocol.CodeTypeError, "state value for %q is not JSON-serialisable: %v", key, err)
	}
	if len(b) > stateQuota {
		return protocol.Errorf(protocol.CodeInvalidArgument,
			"plugin state would be %d bytes, over the %d-byte quota; store large data in files under %s",
			len(b), stateQuota, filepath.Dir(path))
	}
	if err := renameio.WriteFile(path, b, 0o600); err != nil {
		return protocol.Errorf(protocol.CodeRuntimeError, "write plugin state: %v", err)
	}
	return nil
}
