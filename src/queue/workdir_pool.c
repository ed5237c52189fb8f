/* Empty working folders kept for reuse (workdir_pool.h). */
#include "queue/workdir_pool.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"

void workdir_pool_init(struct workdir_pool *p, size_t cap)
{
	memset(p, 0, sizeof *p);
	pthread_mutex_init(&p->lock, NULL);
	p->cap = cap < WORKDIR_POOL_MAX ? cap : WORKDIR_POOL_MAX;
}

void workdir_pool_cleanup(struct workdir_pool *p)
{
	pthread_mutex_destroy(&p->lock);
}

static int slot_path(const char *work_dir, unsigned n, char *out, size_t cap)
{
	return str_fmt(out, cap, "%s/work/.free-%u", work_dir, n);
}

int workdir_pool_take(struct workdir_pool *p, const char *work_dir, const char *workdir)
{
	char path[4096];
	unsigned n;

	pthread_mutex_lock(&p->lock);
	if (!p->n) {
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	n = p->free[--p->n];
	pthread_mutex_unlock(&p->lock);
	return slot_path(work_dir, n, path, sizeof path) == 0 && rename(path, workdir) == 0 ? 1 : 0;
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static bool is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool empty = d != NULL;

	while (d && empty && (de = readdir(d)))
		empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
	if (d)
		closedir(d);
	return empty;
}

/* The folder handed out, never touched since. */
static bool untouched(const char *workdir, const struct stat *handed)
{
	struct stat st;

	return lstat(workdir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_ino == handed->st_ino &&
	       st.st_dev == handed->st_dev && st.st_nlink == 2 && st.st_uid == handed->st_uid &&
	       st.st_mode == handed->st_mode && same_time(st.st_ctim, handed->st_ctim) &&
	       same_time(st.st_mtim, handed->st_mtim) && is_empty(workdir);
}

bool workdir_pool_give(struct workdir_pool *p, const char *work_dir, const char *workdir, const struct stat *handed)
{
	char path[4096];
	unsigned n;
	bool room, kept = false;

	if (!untouched(workdir, handed))
		return false;
	pthread_mutex_lock(&p->lock);
	room = p->n < p->cap;
	n = p->next++;
	pthread_mutex_unlock(&p->lock);
	if (!room || slot_path(work_dir, n, path, sizeof path) || rename(workdir, path) != 0)
		return false;
	pthread_mutex_lock(&p->lock);
	if (p->n < p->cap) {
		p->free[p->n++] = n;
		kept = true;
	}
	pthread_mutex_unlock(&p->lock);
	if (kept)
		return true;
	/* filled meanwhile by others: back where it was, for the caller to remove */
	if (rename(path, workdir) == 0)
		return false;
	rmdir(path);
	return true;
}
