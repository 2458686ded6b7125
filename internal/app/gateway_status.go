package app

import (
	"context"

	"github.com/hermes-go/hermes/internal/cluster"
)

// ClusterStatus reads the cluster's state from the PostgreSQL store
// gateway.store names, without joining it; nil without error when the store
// is state.db (no cluster: the local gateway is all there is).
func (f *Factory) ClusterStatus(ctx context.Context) (*cluster.Status, error) {
	storeURL, err := f.storeURL()
	if err != nil || storeURL == "" {
		return nil, err
	}
	pw, err := f.pgPassword()
	if err != nil {
		return nil, err
	}
	cs, err := f.Store()
	if err != nil {
		return nil, err
	}
	doc, err := cs.Load()
	if err != nil {
		return nil, err
	}
	cc, err := clusterConfig(doc.Map(), storeURL, pw)
	if err != nil {
		return nil, err
	}
	st, err := cluster.ReadStatus(ctx, cc)
	if err != nil {
		return nil, err
	}
	return &st, nil
}
