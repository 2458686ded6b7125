//go:build !linux

package install

import "errors"

func exchange(a, b string) error { return errors.ErrUnsupported }
