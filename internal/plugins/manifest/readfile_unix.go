//go:build unix

package manifest

import (
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/hermes-go/hermes/internal/home"
)

// Discovery reads two small files per plugin, hundreds of times over, so the
// reads go straight to the system: os.Open also registers every file with
// the network poller, a wasted system call for a regular file.

// openRead opens a regular file for reading. O_NONBLOCK keeps the open of a
// named pipe from waiting for a writer forever; anything but a regular file is
// then refused with a *home.NotRegularError. The flag does not change reads of
// a regular file.
func openRead(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, &fs.PathError{Op: "stat", Path: path, Err: err}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(fd)
			return -1, &home.NotRegularError{Path: path, Mode: fileMode(uint32(st.Mode))}
		}
		return fd, nil
	}
}

// fileMode maps the type bits of st_mode to an fs.FileMode for messages.
func fileMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFDIR:
		return fs.ModeDir
	}
	return fs.ModeIrregular
}

func readOnce(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// readFileLimit reads a whole file, but no more than limit+1 bytes: a longer
// file comes back cut there, for the caller's size check to refuse. A
// manifest nearly always fits the first read: a regular file returns short only
// at its end, so a read that leaves room in the buffer is the whole file, and the
// result is copied out at its exact size.
func readFileLimit(path string, limit int) ([]byte, error) {
	fd, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var first [4096]byte
	n, err := readOnce(fd, first[:])
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if n < len(first) {
		return append([]byte(nil), first[:n]...), nil
	}
	buf := append(make([]byte, 0, 2*len(first)), first[:n]...)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := readOnce(fd, buf[len(buf):cap(buf)])
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return buf[:limit+1], nil
		}
	}
}

// readHead reads up to len(buf) bytes from the start of a file. One read is
// enough: a regular file only returns short at its end.
func readHead(path string, buf []byte) (int, error) {
	fd, err := openRead(path)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	n, err := readOnce(fd, buf)
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return n, nil
}
