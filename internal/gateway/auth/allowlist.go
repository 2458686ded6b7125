package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hermes-go/hermes/internal/config"
)

// errUnchanged ends an UpdateDotenv that has nothing to write.
var errUnchanged = errors.New("unchanged")

// syncAllowlistAdd appends userID to platform's allowlist variable when one is
// already configured (the operator's list stays the visible record of who may
// talk to the bot; an unset list is never created, which would lock everyone
// else out). It returns the variable it changed.
func (p *Pairing) syncAllowlistAdd(ctx context.Context, platform, userID string) (string, error) {
	key := p.names(platform).AllowedUsers
	if key == "" || strings.TrimSpace(p.env.get(key)) == "" {
		return "", nil
	}
	if !listable(userID) {
		// "5,6" would let user 6 in too; the store alone records the approval.
		return key, fmt.Errorf("user id %q cannot be written into a comma-separated list; it is approved in the pairing store only", userID)
	}
	err := config.UpdateDotenv(ctx, p.env.path, key, func(cur string, inFile bool) (string, bool, error) {
		if !inFile {
			cur = p.env.processValue(key) // configured in the environment: .env takes it over
		}
		ids := splitList(cur)
		if len(ids) == 0 || contains(ids, "*") || contains(ids, userID) {
			return "", false, errUnchanged
		}
		return strings.Join(append(ids, userID), ","), true, nil
	})
	return changed(key, err)
}

// syncAllowlistRemove takes userID out of platform's allowlist variable. When
// the list was the process environment's, .env gets the rest (it is read over
// the environment); a list left empty is removed from .env, or set empty when
// the environment would otherwise show through.
func (p *Pairing) syncAllowlistRemove(ctx context.Context, platform, userID string) (string, error) {
	key := p.names(platform).AllowedUsers
	if key == "" || !contains(splitList(p.env.get(key)), userID) {
		return "", nil
	}
	err := config.UpdateDotenv(ctx, p.env.path, key, func(cur string, inFile bool) (string, bool, error) {
		if !inFile {
			cur = p.env.processValue(key)
		}
		ids := splitList(cur)
		if !contains(ids, userID) {
			return "", false, errUnchanged
		}
		rest := make([]string, 0, len(ids))
		for _, id := range ids {
			if id != userID {
				rest = append(rest, id)
			}
		}
		if len(rest) == 0 && strings.TrimSpace(p.env.processValue(key)) == "" {
			return "", false, nil
		}
		return strings.Join(rest, ","), true, nil
	})
	return changed(key, err)
}

// listable reports whether id can be one item of an allowlist variable.
func listable(id string) bool {
	return id != "" && !strings.ContainsAny(id, ",*#'\"\\ \t\r\n\x00")
}

func changed(key string, err error) (string, error) {
	switch {
	case errors.Is(err, errUnchanged):
		return "", nil
	case err != nil:
		return key, err
	}
	return key, nil
}
