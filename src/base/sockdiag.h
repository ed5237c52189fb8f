#ifndef ACCORD_BASE_SOCKDIAG_H
#define ACCORD_BASE_SOCKDIAG_H

#include <sys/types.h>

#include "base/err.h"

/* Who owns the other end of a TCP connection on this host.  fd is our side of a connection
 * whose peer is on this machine (loopback): the kernel's socket table (NETLINK_SOCK_DIAG)
 * is asked for the socket whose source is our peer and whose destination is us, and *uid
 * receives the user that socket belongs to.  0, or < 0 with e set (not a TCP socket, no
 * such socket: the peer is not on this host or has gone, netlink refused). */
int sockdiag_peer_uid(int fd, uid_t *uid, struct err *e) WUR;

#endif
