/* The book's answer to oneMKL's vendor question (MIT, like the rest of the repository).
 *
 * oneMKL, linked into torch's libtorch_cpu.so, asks its own mkl_serv_intel_cpu_true() whether it runs on an Intel
 * CPU, and on any other vendor's CPU ignores MKL_CBWR=AVX2,STRICT (it runs AUTO, its own dispatch), so torch's BLAS
 * and LAPACK round differently on AMD than on Intel. libtorch_cpu.so exports that function; a library loaded into
 * the global symbol scope before torch (lib.core.arithmetic.load_vendor_answer, through the .pth hook that `make
 * venv` writes) wins the lookup, and MKL then honours the AVX2 branch. Loaded only where the book's pins are in
 * force, on an x86-64 CPU with AVX2 and FMA that is not Intel's: it makes MKL run AVX2 code, which such a CPU has.
 * Built by `make venv` as .venv/lib/libbook_mkl_vendor.so (cc -shared -fPIC -O2).
 */
int mkl_serv_intel_cpu_true(void) { return 1; }
