//go:build unix

package config

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// checkFileSafe refuses a file that someone other than the current user or
// root could have written, because its content decides what pi runs:
//
//   - its owner must be the current (effective) user or root;
//   - it must not be writable by others (o+w);
//   - it may be group-writable (g+w) only when its group is its owner's
//     private group: the owner's primary group, named like the owner,
//     with no other members listed in /etc/group. That is what Debian's user
//     private groups with umask 002 produce, and only the user is in such a
//     group (for a root-owned file, root's). Any other writable group is
//     refused.
//
// fi describes the file (symlinks followed: the target is what is read).
func checkFileSafe(file, what string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	me := os.Geteuid()
	if int(st.Uid) != me && st.Uid != 0 {
		return &unsafeFileError{fmt.Sprintf(
			"refuse %s %s: it is owned by %s, not by you (%s) or root, so someone else decides what pi runs here; if you trust its content, make it yours (sudo chown %s %s) or copy it into a file of your own, else remove it",
			what, file, userName(int(st.Uid)), userName(me), loginName(me), file)}
	}
	perm := fi.Mode().Perm()
	if perm&0o002 != 0 {
		return &unsafeFileError{fmt.Sprintf(
			"refuse %s %s: it is writable by every user (mode %v), so anyone could change what pi runs; make it yours alone with: chmod go-w %s",
			what, file, perm, file)}
	}
	if perm&0o020 != 0 && !isPrivateGroup(int(st.Gid), int(st.Uid)) {
		return &unsafeFileError{fmt.Sprintf(
			"refuse %s %s: it is writable by group %s (mode %v), which is not the private group of its owner, so the group's members could change what pi runs; make it yours alone with: chmod go-w %s",
			what, file, groupName(int(st.Gid)), perm, file)}
	}
	return nil
}

// isPrivateGroup reports whether gid is the user private group of the file
// owner uid (who is the current user or root): the owner's primary group,
// named like the owner, listing no other member in /etc/group.
func isPrivateGroup(gid, uid int) bool {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil || u.Gid != strconv.Itoa(gid) {
		return false
	}
	g, err := user.LookupGroupId(strconv.Itoa(gid))
	if err != nil || g.Name != u.Username {
		return false
	}
	for _, m := range groupMembers(g.Name) {
		if m != u.Username {
			return false
		}
	}
	return true
}

// groupMembers lists the members /etc/group names for group (nil when the
// file or the group is not there: a group from elsewhere, e.g. LDAP, then
// counts by its name and gid alone).
func groupMembers(group string) []string {
	f, err := os.Open("/etc/group")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 4 || fields[0] != group {
			continue
		}
		var members []string
		for _, m := range strings.Split(fields[3], ",") {
			if m = strings.TrimSpace(m); m != "" {
				members = append(members, m)
			}
		}
		return members
	}
	return nil
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// loginName is uid's user name, else the number, for a command line.
func loginName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

func groupName(gid int) string {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return fmt.Sprintf("%s (gid %d)", g.Name, gid)
	}
	return fmt.Sprintf("gid %d", gid)
}
