//go:build !unix

package home

const openNonblock = 0
