//go:build !unix

package manifest

import (
	"io"
	"os"

	"github.com/hermes-go/hermes/internal/home"
)

// openRegular opens path for reading, refusing anything but a regular file.
func openRegular(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &home.NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return f, nil
}

func readFileLimit(path string, limit int) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A longer file comes back cut at limit+1 bytes, for the caller's size check.
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

func readHead(path string, buf []byte) (int, error) {
	f, err := openRegular(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return n, err
}
