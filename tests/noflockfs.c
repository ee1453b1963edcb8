/* A FUSE passthrough of one directory whose flock is refused (ENOLCK, as an NFS
 * mount without a lock manager answers), for tests/test_caches.py: the file system a
 * cache on a network share behaves like. Built by the test with `cc ... $(pkg-config
 * --cflags --libs fuse3)`. Usage: noflockfs BACKING MOUNTPOINT [fuse options]. */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <fuse.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>

static char root[PATH_MAX];

static void full(char *out, const char *path) { snprintf(out, PATH_MAX, "%s%s", root, path); }
#define FULL(p) char f[PATH_MAX]; full(f, p)
#define RET(x) return (x) == -1 ? -errno : 0

static int x_getattr(const char *p, struct stat *st, struct fuse_file_info *fi) {
    (void)fi; FULL(p); RET(lstat(f, st));
}
static int x_access(const char *p, int mask) { FULL(p); RET(access(f, mask)); }
static int x_readlink(const char *p, char *buf, size_t size) {
    FULL(p); ssize_t n = readlink(f, buf, size - 1);
    if (n == -1) return -errno;
    buf[n] = 0; return 0;
}
static int x_readdir(const char *p, void *buf, fuse_fill_dir_t fill, off_t off,
                     struct fuse_file_info *fi, enum fuse_readdir_flags fl) {
    (void)off; (void)fi; (void)fl; FULL(p);
    DIR *d = opendir(f);
    if (!d) return -errno;
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st = {0};
        st.st_ino = e->d_ino; st.st_mode = e->d_type << 12;
        if (fill(buf, e->d_name, &st, 0, 0)) break;
    }
    closedir(d); return 0;
}
static int x_mkdir(const char *p, mode_t m) { FULL(p); RET(mkdir(f, m)); }
static int x_unlink(const char *p) { FULL(p); RET(unlink(f)); }
static int x_rmdir(const char *p) { FULL(p); RET(rmdir(f)); }
static int x_symlink(const char *t, const char *p) { FULL(p); RET(symlink(t, f)); }
static int x_rename(const char *a, const char *b, unsigned int flags) {
    if (flags) return -EINVAL;
    char fa[PATH_MAX], fb[PATH_MAX]; full(fa, a); full(fb, b); RET(rename(fa, fb));
}
static int x_link(const char *a, const char *b) {
    char fa[PATH_MAX], fb[PATH_MAX]; full(fa, a); full(fb, b); RET(link(fa, fb));
}
static int x_chmod(const char *p, mode_t m, struct fuse_file_info *fi) {
    (void)fi; FULL(p); RET(chmod(f, m));
}
static int x_chown(const char *p, uid_t u, gid_t g, struct fuse_file_info *fi) {
    (void)fi; FULL(p); RET(lchown(f, u, g));
}
static int x_truncate(const char *p, off_t size, struct fuse_file_info *fi) {
    if (fi) RET(ftruncate(fi->fh, size));
    FULL(p); RET(truncate(f, size));
}
static int x_utimens(const char *p, const struct timespec ts[2], struct fuse_file_info *fi) {
    (void)fi; FULL(p); RET(utimensat(AT_FDCWD, f, ts, AT_SYMLINK_NOFOLLOW));
}
static int x_create(const char *p, mode_t m, struct fuse_file_info *fi) {
    FULL(p); int fd = open(f, fi->flags, m);
    if (fd == -1) return -errno;
    fi->fh = fd; return 0;
}
static int x_open(const char *p, struct fuse_file_info *fi) {
    FULL(p); int fd = open(f, fi->flags);
    if (fd == -1) return -errno;
    fi->fh = fd; return 0;
}
static int x_read(const char *p, char *buf, size_t n, off_t off, struct fuse_file_info *fi) {
    (void)p; ssize_t r = pread(fi->fh, buf, n, off); return r == -1 ? -errno : (int)r;
}
static int x_write(const char *p, const char *buf, size_t n, off_t off,
                   struct fuse_file_info *fi) {
    (void)p; ssize_t r = pwrite(fi->fh, buf, n, off); return r == -1 ? -errno : (int)r;
}
static int x_statfs(const char *p, struct statvfs *st) { FULL(p); RET(statvfs(f, st)); }
static int x_release(const char *p, struct fuse_file_info *fi) {
    (void)p; close(fi->fh); return 0;
}
static int x_fsync(const char *p, int d, struct fuse_file_info *fi) {
    (void)p; (void)d; RET(fsync(fi->fh));
}
/* What this file system is for: every flock refused. */
static int x_flock(const char *p, struct fuse_file_info *fi, int op) {
    (void)p; (void)fi; (void)op; return -ENOLCK;
}

static const struct fuse_operations ops = {
    .getattr = x_getattr, .access = x_access, .readlink = x_readlink,
    .readdir = x_readdir, .mkdir = x_mkdir, .unlink = x_unlink, .rmdir = x_rmdir,
    .symlink = x_symlink, .rename = x_rename, .link = x_link, .chmod = x_chmod,
    .chown = x_chown, .truncate = x_truncate, .utimens = x_utimens,
    .create = x_create, .open = x_open, .read = x_read, .write = x_write,
    .statfs = x_statfs, .release = x_release, .fsync = x_fsync, .flock = x_flock,
};

int main(int argc, char *argv[]) {
    if (argc < 3 || !realpath(argv[1], root)) {
        fprintf(stderr, "usage: noflockfs BACKING MOUNTPOINT [fuse options]\n");
        return 2;
    }
    argv[1] = argv[0];
    return fuse_main(argc - 1, argv + 1, &ops, NULL);
}
