//go:build !linux

package startmem

func adviseHugeHeap() {}
