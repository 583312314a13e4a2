//go:build ignore

// archive writes and lists the release archives of `make dist` (scripts/dist.sh) with no
// tool but Go, the same bytes on every machine: entries sorted, owner 0, one timestamp
// (SOURCE_DATE_EPOCH), executables 0755 and everything else 0644.
//
//	go run scripts/archive.go pack -mtime EPOCH -o OUT.tar.gz|OUT.zip -C DIR NAME
//	go run scripts/archive.go list ARCHIVE
//	go run scripts/archive.go sums -o SHA256SUMS FILE...
package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: archive pack|list|sums ...")
	}
	var err error
	switch os.Args[1] {
	case "pack":
		fl := flag.NewFlagSet("pack", flag.ExitOnError)
		mtime := fl.Int64("mtime", 0, "timestamp of every entry (Unix seconds)")
		out := fl.String("o", "", "archive to write: .tar.gz or .zip")
		dir := fl.String("C", ".", "directory holding NAME")
		_ = fl.Parse(os.Args[2:])
		if *out == "" || fl.NArg() != 1 {
			fail("pack: need -o and one NAME")
		}
		err = pack(*out, *dir, fl.Arg(0), time.Unix(*mtime, 0).UTC())
	case "list":
		if len(os.Args) != 3 {
			fail("list: need one archive")
		}
		err = list(os.Args[2])
	case "sums":
		fl := flag.NewFlagSet("sums", flag.ExitOnError)
		out := fl.String("o", "", "file to write")
		_ = fl.Parse(os.Args[2:])
		if *out == "" || fl.NArg() == 0 {
			fail("sums: need -o and files")
		}
		err = sums(*out, fl.Args())
	default:
		fail("unknown command " + os.Args[1])
	}
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "archive:", msg)
	os.Exit(1)
}

type entry struct {
	name string // slash-separated, under NAME/
	path string // on disk; "" for a directory
	mode int64
}

// walk lists NAME and everything under it, sorted by name.
func walk(dir, name string) ([]entry, error) {
	var es []entry
	err := filepath.WalkDir(filepath.Join(dir, name), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			es = append(es, entry{name: rel + "/", mode: 0o755})
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			mode := int64(0o644)
			if info.Mode()&0o111 != 0 || strings.HasSuffix(rel, ".exe") {
				mode = 0o755
			}
			es = append(es, entry{name: rel, path: p, mode: mode})
		default:
			return fmt.Errorf("%s: not a regular file or directory", p)
		}
		return nil
	})
	sort.Slice(es, func(i, j int) bool { return es[i].name < es[j].name })
	return es, err
}

func pack(out, dir, name string, mtime time.Time) (err error) {
	es, err := walk(dir, name)
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	switch {
	case strings.HasSuffix(out, ".tar.gz"):
		zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
		zw.ModTime = mtime // the gzip header's own timestamp, else the current time
		tw := tar.NewWriter(zw)
		for _, e := range es {
			h := &tar.Header{Name: e.name, Mode: e.mode, ModTime: mtime, Format: tar.FormatPAX, Typeflag: tar.TypeDir}
			if e.path != "" {
				b, err := os.ReadFile(e.path)
				if err != nil {
					return err
				}
				h.Typeflag, h.Size = tar.TypeReg, int64(len(b))
				if err := tw.WriteHeader(h); err != nil {
					return err
				}
				if _, err := tw.Write(b); err != nil {
					return err
				}
				continue
			}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return zw.Close()
	case strings.HasSuffix(out, ".zip"):
		zw := zip.NewWriter(f)
		for _, e := range es {
			h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
			h.SetMode(fs.FileMode(e.mode))
			if e.path == "" {
				h.Method = zip.Store
				h.SetMode(fs.ModeDir | 0o755)
			}
			w, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			if e.path != "" {
				b, err := os.ReadFile(e.path)
				if err != nil {
					return err
				}
				if _, err := w.Write(b); err != nil {
					return err
				}
			}
		}
		return zw.Close()
	}
	return fmt.Errorf("%s: want .tar.gz or .zip", out)
}

func list(path string) error {
	switch {
	case strings.HasSuffix(path, ".tar.gz"):
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Printf("%s %o\n", h.Name, h.Mode)
		}
	case strings.HasSuffix(path, ".zip"):
		zr, err := zip.OpenReader(path)
		if err != nil {
			return err
		}
		defer zr.Close()
		for _, f := range zr.File {
			fmt.Printf("%s %o\n", f.Name, f.Mode().Perm())
		}
		return nil
	}
	return fmt.Errorf("%s: want .tar.gz or .zip", path)
}

// sums writes lines as sha256sum prints them ("HEX  NAME"), names relative to out's
// directory.
func sums(out string, files []string) error {
	sort.Strings(files)
	var b strings.Builder
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, err := filepath.Rel(filepath.Dir(out), p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), filepath.ToSlash(rel))
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}
