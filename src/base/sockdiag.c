#include "base/sockdiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* An address as inet_diag wants it: family, port (network order), 16 bytes of address.
 * A v4-mapped IPv6 address is the IPv4 socket it stands for. */
struct ep {
	int family;
	uint16_t port;
	uint32_t addr[4];
};

static int endpoint(const struct sockaddr_storage *ss, struct ep *p)
{
	memset(p, 0, sizeof *p);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)ss;
		p->family = AF_INET;
		p->port = a->sin_port;
		p->addr[0] = a->sin_addr.s_addr;
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)ss;
		p->port = a->sin6_port;
		if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
			p->family = AF_INET;
			memcpy(&p->addr[0], &a->sin6_addr.s6_addr[12], 4);
		} else {
			p->family = AF_INET6;
			memcpy(p->addr, &a->sin6_addr, 16);
		}
		return 0;
	}
	return -1;
}

int sockdiag_peer_uid(int fd, uid_t *uid, struct err *e)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof me, pl = sizeof peer;
	struct ep local, remote;
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	union {
		struct nlmsghdr nh;
		char bytes[8192];
	} ans;
	ssize_t n;
	int nl, rc = -1;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) != 0 || getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 ||
	    endpoint(&me, &local) || endpoint(&peer, &remote) || local.family != remote.family)
		return err_set(e, ERR_INVALID, "not a TCP connection of this host");
	memset(&req, 0, sizeof req);
	req.nh.nlmsg_len = sizeof req;
	req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = (uint8_t)remote.family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0u;
	req.r.id.idiag_sport = remote.port; /* the peer's socket: from it, to us */
	req.r.id.idiag_dport = local.port;
	memcpy(req.r.id.idiag_src, remote.addr, sizeof remote.addr);
	memcpy(req.r.id.idiag_dst, local.addr, sizeof local.addr);
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	req.r.id.idiag_if = 0;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return err_set(e, ERR_INTERNAL, "netlink: %s", strerror(errno));
	if (sendto(nl, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel) != (ssize_t)sizeof req) {
		rc = err_set(e, ERR_INTERNAL, "netlink: %s", strerror(errno));
		goto out;
	}
	do
		n = recv(nl, &ans, sizeof ans, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		rc = err_set(e, ERR_INTERNAL, "netlink: %s", strerror(errno));
		goto out;
	}
	for (struct nlmsghdr *h = &ans.nh; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		const struct inet_diag_msg *m;
		if (h->nlmsg_type == NLMSG_ERROR || h->nlmsg_type == NLMSG_DONE)
			break;
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof *m))
			continue;
		m = NLMSG_DATA(h);
		*uid = (uid_t)m->idiag_uid;
		rc = 0;
		goto out;
	}
	rc = err_set(e, ERR_NOT_FOUND, "the peer's socket is not on this host");
out:
	close(nl);
	return rc;
}
