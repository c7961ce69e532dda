// Package chatlog is the two logs of a session's chat folder: log.jsonl,
// the derived chat log (Entry, Append, Read: one write per entry, a
// reader that skips damaged and oversized lines), and errors.log, where
// the lanes and hooks record what failed (RecordError: one line per
// distinct failure, with a count, the file bounded). Package conversation
// says where they are; neither is ever read or written through a link.
package chatlog
