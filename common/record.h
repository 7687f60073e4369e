/*
 * record.h - what a lease file says, defined once: the helper writes it,
 * isospawnctl reads it (root directly; a caller through the helper's LIST
 * and STOP, which show it only its own guests).
 *
 * ISO_LEASE_DIR/<uid>, the uid's lease file, exists for every pool uid ever
 * leased; a helper holds the uid (its lease) while it holds an exclusive
 * flock(2) on that file (creds.c). While the uid runs a guest, the file
 * holds the guest's record, one GUEST datagram (wire.h): the guest's id,
 * its caller, the helper serving it, its uid, its reaper's pid and start
 * time, its program, when it started, its limits, timeout and network.
 * Never an argument or an environment value: those may be secrets.
 * Otherwise it holds no record but eight bytes: zero while a helper holds
 * the uid (creds.c writes them when it takes the lock, and sweeps the uid
 * whatever the file held), else the mark of the connection that gave it
 * back (creds.h, struct iso_given_uids). Never nothing: ext4 writes a file
 * truncated to nothing back to disk when it is closed (auto_da_alloc), and
 * a spawn waited for that.
 * The directory and files are root's alone (0700, 0600).
 *
 * A record is live only while its reaper, the same pid with the same start
 * time, still runs: a helper that died leaves its record behind, and the
 * pid may be another process's by then. So every reader checks (below),
 * and nothing ever signals a pid from a record without a pidfd proven to
 * be that reaper.
 *
 * The per-caller ceiling on live guests (the rule's 'guests') is held
 * beside the lease files, in files of its own: ISO_STATE_DIR/callers/UID.N,
 * one flock'd slot per live guest (creds.c, caller_slot_take). They hold no
 * record; the lease file is the one record of a guest.
 */
#ifndef ISO_RECORD_H
#define ISO_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire.h"

/* Only in programs built with ISO_STATE_DIR (the helper, isospawnctl). */
#define ISO_LEASE_DIR ISO_STATE_DIR "/leases"

/* The start time of process pid: clock ticks after boot, field 22 of
 * /proc/PID/stat. 0 when it cannot be read (no such process). */
uint64_t iso_proc_start_ticks(pid_t pid);

/*
 * Make the GUEST record `m` the whole of lease file fd (encoded in buf, cap
 * bytes), with the start time of its reaper (m->u.guest.pid) and the wall
 * clock filled in. Returns 0 or -errno.
 */
int iso_record_write(int fd, struct iso_wire_msg *m, uint8_t *buf, size_t cap);

/* Make lease file fd hold no record: eight bytes, `word`. 0 or -errno. */
int iso_record_clear(int fd, uint64_t word);

/*
 * Read the lease file `path` into buf (cap bytes, which must outlive *out)
 * and decode it into *out. Returns 1 when it holds a GUEST record whose
 * reaper still runs; 0 when it holds none (empty, or a record left by a
 * helper that died, or not a lease file); -errno when it cannot be read.
 */
int iso_record_read(const char *path, uint8_t *buf, size_t cap, struct iso_wire_msg *out);

/* End the record's guest: SIGKILL to its reaper, pid 1 of the guest's PID
 * namespace (so every process in it ends), through a pidfd proven to be
 * that reaper (opened first, its start time checked after); then wait, up
 * to ten seconds, until it is gone. Returns 0, or -ESRCH when that process
 * was gone already. */
int iso_record_kill(const struct iso_wire_guest *guest);

#endif /* ISO_RECORD_H */
