#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>
#include <sqlite3.h>

#include "cli/commands.h"
#include "http/mhd.h"
#include "version.h"

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
	printf("built %s %s with jansson %s, sqlite %s, libsodium %s, libmicrohttpd %s\n", __DATE__, __TIME__,
	       JANSSON_VERSION, sqlite3_libversion(), sodium_version_string(),
	       mhd_load(NULL) == 0 ? mhd.get_version() : "(not found)");
	return 0;
}
