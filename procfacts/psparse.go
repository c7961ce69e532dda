package procfacts

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// parsePsStat parses one line of `ps -o ppid=,stat=,lstart=,comm=` run in
// the C locale and UTC: "  6496 Ss   Wed Dec  2 04:33:05 2026 bash". The
// name is last, and may hold spaces. Start is lstart in seconds since the
// epoch.
func parsePsStat(b []byte) (Stat, error) {
	f := strings.Fields(strings.TrimSpace(string(b)))
	if len(f) < 8 || f[1] == "" {
		return Stat{}, errors.New("malformed ps line")
	}
	ppid, err := strconv.Atoi(f[0])
	if err != nil {
		return Stat{}, errors.New("malformed ps line")
	}
	start, err := parseLstart(f[2:7])
	if err != nil {
		return Stat{}, err
	}
	return Stat{PPID: ppid, State: f[1][0], Start: uint64(start), Comm: strings.Join(f[7:], " ")}, nil
}

// parseLstart reads ps's lstart, as fields: "Wed Dec 2 04:33:05 2026".
func parseLstart(f []string) (int64, error) {
	if len(f) != 5 {
		return 0, errors.New("malformed lstart")
	}
	t, err := time.Parse("Mon Jan 2 15:04:05 2006", strings.Join(f, " "))
	if err != nil {
		return 0, errors.New("malformed lstart: " + err.Error())
	}
	return t.Unix(), nil
}
