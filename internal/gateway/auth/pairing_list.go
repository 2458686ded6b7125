package auth

// Reading the pairing store: what `hermes pairing list` shows and what the
// authoriser asks of every message.

import (
	"context"
	"encoding/json"
	"os"
	"sort"
)

// ListPending lists the live pending requests of platform ("" = all), oldest
// first; expired ones are dropped on the way.
func (p *Pairing) ListPending(ctx context.Context, platform string) ([]Pending, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Pending
	err := p.locked(ctx, func(d docs) error {
		platforms, err := p.platformsOf(d, platform, "pending")
		if err != nil {
			return err
		}
		now := p.nowSeconds()
		for _, pl := range platforms {
			pending, err := p.livePending(d, pl, now)
			if err != nil {
				return err
			}
			for id, raw := range pending {
				var e pendingEntry
				_ = json.Unmarshal(raw, &e) // livePending kept only entries that decode
				if e.Hash == "" {
					id = "" // upstream's plaintext entries have no request id
				}
				out = append(out, Pending{Platform: pl, RequestID: id, UserID: e.UserID, UserName: e.UserName,
					CreatedAt: fromSeconds(*e.CreatedAt), AgeMinutes: int((now - *e.CreatedAt) / 60)})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Platform != out[j].Platform {
			return out[i].Platform < out[j].Platform
		}
		return out[i].CreatedAt.Before(out[j].CreatedAt)
	})
	return out, err
}

// ListApproved lists the approved users of platform ("" = all).
func (p *Pairing) ListApproved(platform string) ([]Approved, error) {
	d := p.view(context.Background())
	platforms, err := p.platformsOf(d, platform, "approved")
	if err != nil {
		return nil, err
	}
	var out []Approved
	for _, pl := range platforms {
		approved, err := d.read(approvedName(pl))
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, len(approved))
		for id := range approved {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			var e approvedEntry
			_ = json.Unmarshal(approved[id], &e) // the id alone approves; the rest is for show
			out = append(out, Approved{Platform: pl, UserID: id, UserName: e.UserName, ApprovedAt: fromSeconds(e.ApprovedAt)})
		}
	}
	return out, nil
}

func (p *Pairing) platformsOf(d docs, platform, suffix string) ([]string, error) {
	if platform != "" {
		return []string{platform}, validPlatform(platform)
	}
	return d.platforms(suffix)
}

// IsApproved reports whether userID is in platform's approved list. A file
// is read again only when it changed (the gateway asks on every message); a
// database's row is read each time.
func (p *Pairing) IsApproved(platform, userID string) (bool, error) {
	if validPlatform(platform) != nil || userID == "" {
		return false, nil
	}
	if p.files == nil {
		obj, err := p.view(context.Background()).read(approvedName(platform))
		if err != nil {
			return false, err
		}
		_, ok := obj[userID]
		return ok, nil
	}
	path := p.files.path(approvedName(platform))
	p.cacheMu.Lock()
	defer p.cacheMu.Unlock()
	fi, err := os.Stat(path)
	if err != nil {
		delete(p.approved, platform)
		return false, nil
	}
	c, ok := p.approved[platform]
	if !ok || !os.SameFile(fi, c.stamp) || !fi.ModTime().Equal(c.stamp.ModTime()) || fi.Size() != c.stamp.Size() {
		obj, err := readObject(path)
		if err != nil {
			return false, err
		}
		c = approvedCache{stamp: fi, ids: make(map[string]bool, len(obj))}
		for id := range obj {
			c.ids[id] = true
		}
		p.approved[platform] = c
	}
	return c.ids[userID], nil
}
