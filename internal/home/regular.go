package home

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is a path that must be an ordinary file but is something else
// (a named pipe, a device, a directory). Reading a named pipe would block until
// some other process writes to it, so hermes refuses it instead of hanging.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a file; replace it with a regular file", e.Path, ModeName(e.Mode))
}

// ModeName names the kind of file a mode describes, for messages.
func ModeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// ReadFile reads a whole regular file like os.ReadFile, but refuses anything else
// with a *NotRegularError without blocking: the file is opened non-blocking, so a
// named pipe without a writer does not hang the open, and then checked.
func ReadFile(path string) ([]byte, error) { return ReadFileLimit(path, -1) }

// ReadFileLimit is ReadFile that reads no more than limit+1 bytes (limit < 0:
// no limit). A longer file comes back cut there, for the caller's size check
// (internal/limits) to refuse by name and line without holding all of it.
func ReadFileLimit(path string, limit int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if limit < 0 {
		return io.ReadAll(f)
	}
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}
