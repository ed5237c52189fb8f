#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <microhttpd.h>
#include <sodium.h>
#include <sqlite3.h>

#include "cli/commands.h"
#include "version.h"

/* The versions built against: asking libmicrohttpd or SQLite would load them (they are
 * loaded on demand: http/mhd.h, store/sqlite_api.h), which takes longer than the rest of
 * this command.  MHD_VERSION 0x00097500 is 0.9.75. */
#define MHD_PART(shift) ((unsigned)(MHD_VERSION >> (shift)) & 0xffu)

int cli_version_main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf(
		    "usage: accord version\n\nPrints the version of accord and of the libraries it was built with.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "accord version: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	printf("accord %s\n", ACCORD_VERSION);
	printf("built %s %s with jansson %s, sqlite %s, libsodium %s, libmicrohttpd %x.%x.%x\n", __DATE__, __TIME__,
	       JANSSON_VERSION, SQLITE_VERSION, sodium_version_string(), MHD_PART(24), MHD_PART(16), MHD_PART(8));
	return 0;
}
