/* The seed replay of a fuzz target without libFuzzer: each file named, or each file in each
 * folder named (in name order), is read whole and given to LLVMFuzzerTestOneInput once, as
 * `target -runs=0 CORPUS` does.  Linked with the ASan+UBSan build's library (make test),
 * so CI replays the corpora without building the whole tree again with clang.  Arguments
 * starting with '-' (libFuzzer's flags) are ignored.  Exit 0 when every input ran; a
 * sanitizer report or a failed assert ends the program as it would under libFuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs the target on the file at path; 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long n;
	int rc = -1;

	if (!f)
		goto out;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		goto out;
	/* a copy of exactly size bytes, so that ASan sees a read past the end */
	data = malloc(n ? (size_t)n : 1);
	if (!data || fread(data, 1, (size_t)n, f) != (size_t)n)
		goto out;
	LLVMFuzzerTestOneInput(data, (size_t)n);
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "replay: cannot read %s\n", path);
	free(data);
	if (f)
		fclose(f);
	return rc;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Runs every regular file of dir; the number run, or -1. */
static int replay_dir(const char *dir)
{
	struct dirent **names = NULL;
	char path[4096];
	struct stat st;
	int n = scandir(dir, &names, NULL, by_name), done = 0;

	if (n < 0) {
		fprintf(stderr, "replay: cannot read the folder %s\n", dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (done >= 0 && names[i]->d_name[0] != '.') {
			if (str_fmt(path, sizeof path, "%s/%s", dir, names[i]->d_name) || stat(path, &st) != 0)
				done = -1;
			else if (S_ISREG(st.st_mode))
				done = replay_file(path) ? -1 : done + 1;
		}
		free(names[i]);
	}
	free(names);
	return done;
}

int main(int argc, char **argv)
{
	struct stat st;
	int total = 0;

	for (int i = 1; i < argc; i++) {
		int n;

		if (argv[i][0] == '-')
			continue;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: no such file or folder: %s\n", argv[i]);
			return 1;
		}
		n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]) ? -1 : 1;
		if (n < 0)
			return 1;
		total += n;
	}
	printf("replay: %d inputs\n", total);
	return 0;
}
