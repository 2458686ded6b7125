package session

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Delivery is one gateway answer in the delivery ledger: recorded before it
// is sent, marked when the platform took it, so an answer a crash kept from
// its chat is sent after the restart (upstream's delivery ledger).
type Delivery struct {
	ID         int64
	SessionKey string
	Platform   string
	Route      string // where it goes (JSON: chat and thread)
	Text       string
	CreatedAt  time.Time
	Attempts   int // sends begun; more than 0 and unsent means one may have arrived
}

// RecordDelivery adds an answer about to be sent (d.Attempts: the sends
// counted as begun already, 1 for one about to start: one commit, not two)
// and returns its id.
func (s *Store) RecordDelivery(ctx context.Context, d Delivery) (int64, error) {
	res, err := s.exec(ctx, `INSERT INTO deliveries (session_key, platform, route, text, created_at, attempts) VALUES (?, ?, ?, ?, ?, ?)`,
		d.SessionKey, d.Platform, d.Route, d.Text, ms(s.now()), d.Attempts)
	if err != nil {
		return 0, s.wrap("recording a delivery", err)
	}
	return res.LastInsertId()
}

// DeliveryAttempt counts a send about to begin.
func (s *Store) DeliveryAttempt(ctx context.Context, id int64) error {
	_, err := s.exec(ctx, `UPDATE deliveries SET attempts = attempts + 1 WHERE id = ?`, id)
	return s.wrap("counting a delivery attempt", err)
}

// Delivered marks answers sent, all in one commit.
func (s *Store) Delivered(ctx context.Context, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	now := ms(s.now())
	return s.wrap("marking deliveries", s.tx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := s.txExec(ctx, tx, `UPDATE deliveries SET sent_at = ? WHERE id = ?`, now, id); err != nil {
				return err
			}
		}
		return nil
	}))
}

// DeliverySent says whether answer id was marked sent: a cluster's
// connection owner asks before performing a routed send again.
func (s *Store) DeliverySent(ctx context.Context, id int64) (bool, error) {
	var sent bool
	err := s.db.QueryRowContext(ctx, `SELECT sent_at IS NOT NULL FROM deliveries WHERE id = ?`, id).Scan(&sent)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return sent, s.wrap("reading the delivery ledger", err)
}

// UnsentDeliveries are the answers of platform recorded since since, never
// marked sent, tried fewer than maxAttempts times, oldest first. Sent rows
// older than since are deleted (the ledger does not grow forever).
func (s *Store) UnsentDeliveries(ctx context.Context, platform string, since time.Time, maxAttempts int) ([]Delivery, error) {
	if _, err := s.exec(ctx, `DELETE FROM deliveries WHERE created_at < ?`, ms(since)); err != nil {
		return nil, s.wrap("pruning the delivery ledger", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, session_key, platform, route, text, created_at, attempts FROM deliveries
		WHERE sent_at IS NULL AND platform = ? AND created_at >= ? AND attempts < ? ORDER BY id`, platform, ms(since), maxAttempts)
	if err != nil {
		return nil, s.wrap("reading the delivery ledger", err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		var created int64
		if err := rows.Scan(&d.ID, &d.SessionKey, &d.Platform, &d.Route, &d.Text, &created, &d.Attempts); err != nil {
			return nil, s.wrap("reading the delivery ledger", err)
		}
		d.CreatedAt = fromMS(created)
		out = append(out, d)
	}
	return out, s.wrap("reading the delivery ledger", rows.Err())
}
