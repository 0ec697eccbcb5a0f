/*
 * popdist-probe: a tiny MPI program for poprun's tests.
 *
 * It calls MPI_Init, checks that the ranks can talk (an all-reduce of the ranks), and prints one
 * line with its POPDIST_* variables and its MPI rank and size:
 *
 *   instance=1 local=1 replicas=16 local_replicas=4 offset=4 ipr=1 instances=4 uniform=1 ilds=1
 *   topology=POD16 offline=0 phantom=- rank=1 size=4 ranksum=6
 *
 * Options, each acting only in the instance named by --on (default: every instance):
 *   --on I          the instance that acts on the options below
 *   --exit N        exit with status N after MPI_Finalize
 *   --signal S      kill itself with signal S after MPI_Init
 *   --sleep SEC     sleep before finishing (for interrupt tests)
 *   --stderr TEXT   also print TEXT on stderr
 *   --no-newline    end the line without a newline (tests tagging of partial lines)
 *   --affinity      add "cpus=LIST" (the CPUs this process may run on)
 *   --netns         add "netns=ID" (the network namespace this process runs in)
 * and, acting in every instance but the one named by --on:
 *   --others-sleep SEC  sleep before finishing (the others of a failing instance)
 */
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "-";
}

static void print_affinity(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        printf(" cpus=?");
        return;
    }
    printf(" cpus=");
    const char *sep = "";
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set)) {
            printf("%s%d", sep, c);
            sep = ",";
        }
    }
}

int main(int argc, char **argv)
{
    int on = -1, exit_code = 0, sig = 0, sleep_s = 0, newline = 1, affinity = 0, netns = 0;
    int others_sleep = 0;
    const char *err_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
        if (strcmp(a, "--on") == 0)
            on = atoi(v), i++;
        else if (strcmp(a, "--exit") == 0)
            exit_code = atoi(v), i++;
        else if (strcmp(a, "--signal") == 0)
            sig = atoi(v), i++;
        else if (strcmp(a, "--sleep") == 0)
            sleep_s = atoi(v), i++;
        else if (strcmp(a, "--stderr") == 0)
            err_text = v, i++;
        else if (strcmp(a, "--no-newline") == 0)
            newline = 0;
        else if (strcmp(a, "--affinity") == 0)
            affinity = 1;
        else if (strcmp(a, "--netns") == 0)
            netns = 1;
        else if (strcmp(a, "--others-sleep") == 0)
            others_sleep = atoi(v), i++;
        else {
            fprintf(stderr, "popdist-probe: unknown argument %s\n", a);
            return 64;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, size, sum = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int me = on < 0 || on == rank;
    printf("instance=%s local=%s replicas=%s local_replicas=%s offset=%s ipr=%s instances=%s "
           "uniform=%s ilds=%s topology=%s offline=%s phantom=%s rank=%d size=%d ranksum=%d",
           env("POPDIST_INSTANCE_INDEX"), env("POPDIST_LOCAL_INSTANCE_INDEX"),
           env("POPDIST_NUM_TOTAL_REPLICAS"), env("POPDIST_NUM_LOCAL_REPLICAS"),
           env("POPDIST_REPLICA_INDEX_OFFSET"), env("POPDIST_NUM_IPUS_PER_REPLICA"),
           env("POPDIST_NUM_INSTANCES"), env("POPDIST_UNIFORM_REPLICAS_PER_INSTANCE"),
           env("POPDIST_NUM_ILDS"), env("POPDIST_TOPOLOGY"), env("POPDIST_OFFLINE_MODE"),
           env("GCL_SIM_PHANTOM"), rank, size, sum);
    if (affinity)
        print_affinity();
    if (netns) {
        char ns[64] = "?";
        ssize_t n = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1);
        ns[n > 0 ? n : 1] = '\0';
        printf(" netns=%s", ns);
    }
    if (newline || !me)
        printf("\n");
    fflush(stdout);
    if (me && err_text) {
        fprintf(stderr, "%s\n", err_text);
        fflush(stderr);
    }
    if (me && sig)
        raise(sig);
    if (me && sleep_s)
        sleep((unsigned)sleep_s);
    if (!me && others_sleep)
        sleep((unsigned)others_sleep);
    /* A failing instance must not wait in MPI_Finalize for the others. */
    if (me && exit_code)
        _exit(exit_code);
    MPI_Finalize();
    return 0;
}
