package session

import "context"

// DocStore keeps small named JSON documents, each read and replaced whole:
// the gateway's pairing state (pending codes, approved users, rate limits).
// The default is upstream's files in $HERMES_HOME/platforms/pairing/ (the
// gateway/auth package's); pgstore keeps them in a table, so every gateway
// process of a cluster and `hermes pairing` on any machine share them.
type DocStore interface {
	// LockedDocs runs fn holding the documents' one lock (every process
	// takes it), so a read-modify-write is never interleaved with another.
	LockedDocs(ctx context.Context, fn func(DocTx) error) error
	// Docs reads without the lock: each document as last written whole.
	Docs() DocReader
	// DocWhere names a document in messages (a file's path, a row).
	DocWhere(name string) string
}

// DocReader reads documents.
type DocReader interface {
	// Read is the document's bytes; nil when there is none.
	Read(ctx context.Context, name string) ([]byte, error)
	// Names lists the documents there are, in no order.
	Names(ctx context.Context) ([]string, error)
}

// DocTx reads and writes documents under the lock.
type DocTx interface {
	DocReader
	Write(ctx context.Context, name string, data []byte) error
}
