/* peak OUT CMD [ARG...]: run CMD (stdin, stdout and stderr passed through) from this small
 * process with fork(), wait for it, and write "<peak RSS KiB> <user+system CPU ms>" of CMD
 * to OUT, then its wall time in ms (fork to reap, on the monotonic clock: without the
 * cost of starting this helper from Python); exit with CMD's exit code (128 + signal when
 * killed).
 *
 * Why: a child started by Python's subprocess (vfork/posix_spawn) or after a fork() of a
 * large parent is charged the parent's resident set until it execs (the kernel keeps the
 * old mm's high-water mark in ru_maxrss), so os.wait4 in the bench reported Python's
 * ~13 MiB, not Mercury's. Forked from this ~1 MiB process, the figure is the command's own. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/wait.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: peak OUT CMD [ARG...]\n");
        return 64;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("peak: fork");
        return 71;
    }
    if (pid == 0) {
        execv(argv[2], argv + 2);
        perror("peak: exec");
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("peak: wait4");
        return 71;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        perror("peak: open");
        return 73;
    }
    double cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    fprintf(out, "%ld %.3f %.3f\n", ru.ru_maxrss, cpu, wall);
    fclose(out);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
