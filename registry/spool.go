package registry

import (
	"context"
	"fmt"
	"io"

	"github.com/transcript-tool/transcript-tool/internal/extsort"
	"github.com/transcript-tool/transcript-tool/store"
)

// spoolHeld bounds the bytes of the registry's files that one read of the
// registry holds in memory when its backend cannot open them in place. A
// variable for tests.
var spoolHeld int64 = 4 << 20

// spool opens the files of one read of the registry. A backend that
// cannot open a file in place (object storage) has each loaded whole when
// it is opened, since a reader opens every file of the registry at once to
// read one state of it (see openRegistry): the first spoolHeld bytes of
// them are held in memory, the rest put in one unlinked temporary file,
// so that a registry of any size is read in bounded memory. Its zero value
// is ready to use; the temporary file goes with the last file spooled to
// it.
type spool struct {
	held int64
	sp   extsort.Spill
	open int // the files in sp not yet closed
}

// load opens h of b, as store.OpenFile does.
func (p *spool) load(ctx context.Context, b store.Backend, h store.Handle) (store.File, error) {
	if _, ok := store.As[store.Opener](b); ok {
		return store.OpenFile(ctx, b, h)
	}
	rc, err := b.Load(ctx, h, 0, 0)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	room := max(spoolHeld-p.held, 0)
	data, err := io.ReadAll(io.LimitReader(rc, room+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", b.Path(h), err)
	}
	if int64(len(data)) <= room {
		p.held += int64(len(data))
		return store.Loaded(data, h.Name), nil
	}
	c := p.sp.Write(data)
	buf := make([]byte, 1<<20)
	for {
		n, err := rc.Read(buf)
		c.N += p.sp.Write(buf[:n]).N
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", b.Path(h), err)
		}
	}
	if err := p.sp.Err(); err != nil {
		return nil, fmt.Errorf("read %s: spool: %w", b.Path(h), err)
	}
	p.open++
	return &spooled{p.sp.Section(c), store.FileInfo{Name: h.Name, Size: c.N}, p}, nil
}

// spooled is a file a spool put in its temporary file.
type spooled struct {
	*io.SectionReader
	fi store.FileInfo
	p  *spool
}

func (f *spooled) Stat() store.FileInfo { return f.fi }

// Close releases the spool's temporary file when f is the last file in it.
func (f *spooled) Close() error {
	if f.p != nil {
		if f.p.open--; f.p.open == 0 {
			f.p.sp.Close()
		}
		f.p = nil
	}
	return nil
}
