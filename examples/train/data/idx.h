/*
 * Reading the IDX files of (Fashion-)MNIST, gzip'd as Debian's dataset-fashion-mnist installs
 * them or plain. An IDX file is a 4-byte magic (0, 0, element type, number of dimensions), the
 * dimensions as big-endian 32-bit integers, then the elements. Only unsigned bytes (type 0x08)
 * are read: that is what the images and labels are.
 */
#ifndef TRAIN_IDX_H
#define TRAIN_IDX_H

#include <stddef.h>
#include <stdint.h>

/* Items of an IDX file: COUNT items of ROWS x COLS bytes (ROWS = COLS = 1 for labels). */
typedef struct {
    long count;     /* items read (at most the file's first dimension) */
    long available; /* items the file holds */
    int rows, cols;
    uint8_t *data; /* count x rows x cols bytes, owned */
} idx_array_t;

/*
 * Reads PATH, which must have NDIMS dimensions (3 for images, 1 for labels), keeping the first
 * MAX_ITEMS items (0: all of them; then the whole stream is read, so gzip's CRC is checked and
 * trailing bytes are refused). Returns 0, or -1 with one line in ERR saying what is wrong with
 * the file (missing, not IDX, truncated, corrupt gzip stream, implausible dimensions).
 */
int idx_read(const char *path, int ndims, long max_items, idx_array_t *out, char *err,
             size_t errlen);
void idx_free(idx_array_t *a);

/* The dataset of a run: training and test images with their labels (0 .. classes-1). */
typedef struct {
    idx_array_t train_x, train_y, test_x, test_y;
    int classes;
} dataset_t;

/*
 * Reads DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz (or the same names without .gz),
 * keeping the first MAX_TRAIN and MAX_TEST samples (0: all), and checks that they fit together:
 * as many labels as images, the same image size in both sets, labels below 10. Returns 0, or -1
 * with one line in ERR.
 */
int dataset_load(const char *dir, long max_train, long max_test, dataset_t *out, char *err,
                 size_t errlen);
void dataset_free(dataset_t *d);

#endif
