/* A free() that holds small blocks back and checks that nobody wrote into them (#46).
 *
 * glibc's debug malloc (MALLOC_CHECK_=3) catches a write past a block's end when the block
 * is freed, but not a write into a block that was already freed, which is what
 * `malloc_consolidate(): unaligned fastbin chunk detected` means: a freed small chunk's
 * link was overwritten. valgrind catches that, but emulates no AVX-512 and runs one thread
 * at a time, so a race between gloo's threads and Python's, or a write in an AVX-512
 * kernel, never happens under it. This library runs at native speed with every thread:
 *
 *   LD_PRELOAD=/path/free_quarantine.so FREE_QUARANTINE_LOG=/tmp/fq python ...
 *
 * Every freed block of up to FREE_QUARANTINE_MAX_BYTES usable bytes (default 1024) is
 * filled with 0xA5 and held in a ring of FREE_QUARANTINE_SLOTS blocks (default 65536)
 * instead of going back to malloc. Bigger blocks are held too, in a second ring bounded
 * by bytes (FREE_QUARANTINE_LARGE_BYTES, default 256 MiB; 0 holds none): the trainer puts
 * every block on the heap (trainer/cpu_speed/memory.py), tensor storages included, so a
 * late write into a freed tensor (an asynchronous collective, a kernel on another thread)
 * lands in whatever malloc carved out of it since, small chunks and their links among
 * them. When a ring pushes a block out, and for every block still held at exit, its bytes
 * are checked: a byte that is no longer 0xA5 was written after the block was freed. A
 * block freed twice shows the same way (its second free checks a block malloc has handed
 * out again) or as glibc's own double-free abort. The report goes to
 * FREE_QUARANTINE_LOG/<pid>.log (stderr without it): the block's address and size, the
 * changed bytes, and the stack of the free() call that released it
 * (FREE_QUARANTINE_FRAMES frames, default 6), which names the object that was freed too
 * early (or written too late). Reports use no malloc (they run inside free).
 *
 * Cost, measured on a small torch training loop (300 AdamW steps of 8 256x256 linears,
 * 2-core AMD EPYC): 1.2x with 16384 slots and no stack, 1.8x with 65536 slots and 4
 * frames, 4.2x with 262144 slots and 12 frames. Most of it is the unwinder and cache
 * misses on blocks that left the cache long ago. On bench/checkpoint_gather_loop.py (30
 * gathers, two workers, 2-core Intel Xeon with AMX): 1.66x with the default small ring
 * only (FREE_QUARANTINE_LARGE_BYTES=0), 1.93x with the big blocks held too; a worker
 * checked about 6.7 GB of freed big blocks in it.
 *
 * Build: gcc -O2 -Wall -Werror -shared -fPIC -o free_quarantine.so bench/free_quarantine.c -lpthread
 * (bench/heap_checks.sh builds it into var/ and preloads it with HEAP_CHECK=quarantine).
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* glibc's own free, exported for exactly this kind of wrapper (no dlsym: dlsym allocates). */
extern void __libc_free(void *block);

#define FILL 0xA5
#define FRAMES 12 /* at most; FREE_QUARANTINE_FRAMES says how many (0: none, fastest) */
#define LARGE_SLOTS 4096 /* big blocks held at once, at most (the byte budget usually binds) */

struct held {
    unsigned char *block;
    size_t size;
    int depth;
    void *frames[FRAMES];
};

static struct held *ring;
static size_t slots, max_bytes, frames, next_slot;
/* The big blocks: a FIFO of held blocks, oldest at large_head, at most large_budget bytes. */
static struct held *large;
static size_t large_budget, large_head, large_count, large_bytes;
static int log_fd = 2;
static int ready;
static unsigned long reports, checked, checked_bytes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Set while this thread is inside our free: backtrace() may allocate and free. */
static __thread int busy;
/* What an untouched held block reads as; bigger blocks are compared a stride at a time. */
static unsigned char pattern[65536];

static size_t env_size(const char *name, size_t fallback) {
    const char *value = getenv(name);
    return value && *value ? strtoull(value, NULL, 10) : fallback;
}

static void lock_ring(void) { pthread_mutex_lock(&lock); }
static void unlock_ring(void) { pthread_mutex_unlock(&lock); }

__attribute__((constructor)) static void start(void) {
    slots = env_size("FREE_QUARANTINE_SLOTS", 65536);
    if (slots == 0)
        slots = 1;
    max_bytes = env_size("FREE_QUARANTINE_MAX_BYTES", 1024);
    large_budget = env_size("FREE_QUARANTINE_LARGE_BYTES", 256UL << 20);
    frames = env_size("FREE_QUARANTINE_FRAMES", 6);
    if (frames > FRAMES)
        frames = FRAMES;
    if (max_bytes > sizeof pattern)
        max_bytes = sizeof pattern;
    memset(pattern, FILL, sizeof pattern);
    const char *dir = getenv("FREE_QUARANTINE_LOG");
    if (dir && *dir) {
        char path[512];
        snprintf(path, sizeof path, "%s/%d.log", dir, (int)getpid());
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0)
            log_fd = fd;
    }
    void *memory = mmap(NULL, slots * sizeof(struct held), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED)
        return; /* stays a plain free() */
    ring = memory;
    if (large_budget) {
        memory = mmap(NULL, LARGE_SLOTS * sizeof(struct held), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        large = memory == MAP_FAILED ? NULL : memory; /* without it, big blocks go straight back */
    }
    void *warm[2];
    busy = 1;
    backtrace(warm, 2); /* the first call loads libgcc's unwinder: do it outside a free */
    busy = 0;
    /* A fork while another thread holds the lock would leave the child's lock held. */
    pthread_atfork(lock_ring, unlock_ring, unlock_ring);
    ready = 1;
}

static void say(const char *text) {
    ssize_t ignored = write(log_fd, text, strlen(text));
    (void)ignored;
}

/* The held block's bytes are all FILL, or a report with the changed bytes and its stack. */
static void check(const struct held *held) {
    checked_bytes += held->size;
    if (++checked % (1UL << 20) == 0) { /* a process killed before exit still says how far */
        char line[128];
        snprintf(line, sizeof line, "free_quarantine: pid %d: %lu blocks checked so far (%lu MiB)\n",
                 (int)getpid(), checked, checked_bytes >> 20);
        say(line);
    }
    const unsigned char *bytes = held->block;
    size_t same = 0;
    while (same < held->size) {
        size_t stride = held->size - same < sizeof pattern ? held->size - same : sizeof pattern;
        if (memcmp(bytes + same, pattern, stride) != 0)
            break;
        same += stride;
    }
    if (same == held->size)
        return;
    size_t first = held->size, last = 0;
    for (size_t i = 0; i < held->size; i++) {
        if (bytes[i] != FILL) {
            if (first == held->size)
                first = i;
            last = i;
        }
    }
    reports++;
    char line[512];
    int n = snprintf(line, sizeof line,
                     "free_quarantine: pid %d: %zu-byte block %p written after free: "
                     "bytes %zu..%zu changed:",
                     (int)getpid(), held->size, (void *)bytes, first, last);
    for (size_t i = first; i <= last && i < first + 64 && n < (int)sizeof line - 4; i++)
        n += snprintf(line + n, sizeof line - n, " %02x", bytes[i]);
    say(line);
    say("\nfree_quarantine: freed by:\n");
    backtrace_symbols_fd(held->frames, held->depth, log_fd);
    say("free_quarantine: found when the block left the quarantine, in:\n");
    void *here[FRAMES];
    backtrace_symbols_fd(here, backtrace(here, FRAMES), log_fd);
}

/* Hold a big block (lock held): the oldest ones leave, checked, until it fits. */
static void hold_large(const struct held *incoming) {
    while (large_count == LARGE_SLOTS || large_bytes + incoming->size > large_budget) {
        struct held *oldest = &large[large_head];
        check(oldest);
        __libc_free(oldest->block);
        large_bytes -= oldest->size;
        large_head = (large_head + 1) % LARGE_SLOTS;
        large_count--;
    }
    large[(large_head + large_count) % LARGE_SLOTS] = *incoming;
    large_count++;
    large_bytes += incoming->size;
}

void free(void *block) {
    if (!block)
        return;
    size_t size = malloc_usable_size(block);
    int small = size <= max_bytes;
    if (!ready || busy || (!small && (!large || size > large_budget))) {
        __libc_free(block);
        return;
    }
    busy = 1;
    struct held incoming = {.block = block, .size = size};
    if (frames) {
        incoming.depth = backtrace(incoming.frames, (int)frames);
    } else { /* free()'s caller only: usually operator delete or c10's free_cpu */
        incoming.frames[0] = __builtin_return_address(0);
        incoming.depth = 1;
    }
    memset(block, FILL, size);
    pthread_mutex_lock(&lock);
    if (!small) {
        hold_large(&incoming);
        pthread_mutex_unlock(&lock);
        busy = 0;
        return;
    }
    struct held leaving = ring[next_slot];
    ring[next_slot] = incoming;
    next_slot = (next_slot + 1) % slots;
    if (leaving.block)
        check(&leaving);
    pthread_mutex_unlock(&lock);
    if (leaving.block)
        __libc_free(leaving.block);
    busy = 0;
}

__attribute__((destructor)) static void finish(void) {
    if (!ready)
        return;
    pthread_mutex_lock(&lock);
    busy = 1;
    for (size_t i = 0; i < slots; i++)
        if (ring[i].block)
            check(&ring[i]);
    for (size_t i = 0; i < large_count; i++)
        check(&large[(large_head + i) % LARGE_SLOTS]);
    char line[200];
    snprintf(line, sizeof line,
             "free_quarantine: pid %d: %lu blocks checked (%lu MiB), %lu written after free\n",
             (int)getpid(), checked, checked_bytes >> 20, reports);
    if (log_fd != 2 || reports)
        say(line);
    pthread_mutex_unlock(&lock);
}
