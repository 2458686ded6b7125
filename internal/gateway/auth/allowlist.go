package auth

import (
	"context"
	"errors"
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

func changed(key string, err error) (string, error) {
	switch {
	case errors.Is(err, errUnchanged):
		return "", nil
	case err != nil:
		return key, err
	}
	return key, nil
}
