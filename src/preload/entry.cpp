// The preload library's memcpy, memmove and memset, bound the way the
// kernel binds its static calls: once, before anything runs. This part is
// any ELF target's; entry_<arch>.cpp holds the entries themselves.
//
// At load. A local IFUNC (load_resolver, below) is this library's last
// relocation; ld.so runs it while relocating this library, after the C
// library and before the program. It builds the state (x86-64: no CPUID,
// the leaves come from the loader's copy) and re-points the dynamic
// symbols memcpy, memmove and memset at the variants: three stores to
// their st_value in this library's .dynsym. The linker puts .dynsym in
// RELRO (dynsym_relro.ld), which ld.so makes read-only only once it has
// relocated this library, so the stores need no system call; where a
// linker left it on a read-only page, that page is made writable for the
// stores and read-only again (never executable). Every object the loader
// binds after that - the program (GLOB_DAT or JUMP_SLOT, now or lazily),
// every lazily bound PLT slot of any library, dlopen, dlsym - then calls
// the variant itself: the indirection glibc's own ifunc binding gives.
//
// Objects relocated earlier keep the symbols' first value, the entries
// (libraries the program needs that bind at load: BIND_NOW ones). The
// three entries live alone on one page-aligned page of code; each jumps
// through a pointer set at load, entry i at page + 16 * i. No code is ever
// rewritten: the .dynsym stores are data, in RELRO, before anything runs.
//
// Where that cannot be done (a read-only .dynsym and a seccomp filter or
// policy that denies the mprotect, a .dynsym on an executable page, no GNU
// hash table), the
// symbols keep the entries and the entries their pointers: the binding of
// before, one indirect jump more. uarch_preload_binding() says which.
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include "dispatch/state.h"
#include "sys/sys.h"
#include "sys/load_data.h"
#include "preload/entry.h"
#include "dispatch/bind.h"
#include "uarch.h"

using uarch::Op;

// 1 once ld.so relocated this library (the load-time binding ran).
int uarch_preload_relocated UARCH_LOAD_DATA;

extern "C" {
// The linker's: this object's ELF header as mapped, and its dynamic section.
extern const Elf64_Ehdr __ehdr_start __attribute__((visibility("hidden")));
extern Elf64_Dyn _DYNAMIC[] __attribute__((visibility("hidden")));
}

namespace uarch {

namespace {

constexpr Op entry_op[entry_count] = {op_memcpy, op_memmove, op_memset};
constexpr const char *entry_name[entry_count] = {"memcpy", "memmove", "memset"};
using sys::failed;
using sys::prot_read;
using sys::prot_write;

// 1 once the offsets lead to the variants.
int g_pointers_set UARCH_LOAD_DATA;

// 1 once the dynamic symbols name the variants.
int g_symbols_bound UARCH_LOAD_DATA;

// What the entries lead to now.
[[maybe_unused]] void load_targets(void *targets[entry_count])
{
	for (uint32_t i = 0; i < entry_count; i++)
		targets[i] = entry_target(i);
}

// ---- the dynamic symbols --------------------------------------------------

// This object's program headers, as mapped (__ehdr_start.e_phnum of them).
const Elf64_Phdr *program_headers()
{
	return reinterpret_cast<const Elf64_Phdr *>(uintptr_t(&__ehdr_start) + __ehdr_start.e_phoff);
}

// Where ld.so mapped this object: the ELF header's address less the
// address the segment that holds it was linked at.
uintptr_t load_bias()
{
	const uintptr_t ehdr = uintptr_t(&__ehdr_start);
	const Elf64_Phdr *ph = program_headers();
	for (uint32_t i = 0; i < __ehdr_start.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
			return ehdr - ph[i].p_vaddr;
	return ehdr;
}

bool same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

// The symbol named name through the GNU hash table (the only one this
// library is linked with), or nullptr.
Elf64_Sym *gnu_lookup(Elf64_Sym *symtab, const char *strtab, const uint32_t *table, const char *name)
{
	uint32_t h = 5381;
	for (const char *p = name; *p; p++)
		h = h * 33 + uint8_t(*p);
	const uint32_t nbuckets = table[0], symoffset = table[1], bloom_words = table[2];
	if (nbuckets == 0)
		return nullptr;
	const uint32_t *buckets = table + 4 + 2 * bloom_words;   // past the 64-bit bloom words
	const uint32_t *chain = buckets + nbuckets;
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return nullptr;
	// Each chain holds the hashes of the symbols of one bucket, the last
	// with its low bit set.
	for (;; i++) {
		const uint32_t ch = chain[i - symoffset];
		if ((ch | 1) == (h | 1) && same(strtab + symtab[i].st_name, name))
			return &symtab[i];
		if (ch & 1)
			return nullptr;
	}
}

// Re-points memcpy, memmove and memset in this object's .dynsym at
// targets; false, and nothing written, where that cannot be done without
// an executable page turning writable, or the system refuses. page_size:
// the system's.
[[maybe_unused]] bool patch_symbols(void *const targets[entry_count], uintptr_t page_size)
{
	const uintptr_t bias = load_bias();
	// glibc's ld.so rewrites the dynamic section's addresses in place
	// (adds the bias), other loaders leave them as linked.
	auto at = [bias](uint64_t v) { return v < bias ? bias + v : uintptr_t(v); };
	Elf64_Sym *symtab = nullptr;
	const char *strtab = nullptr;
	const uint32_t *gnu_hash = nullptr;
	for (const Elf64_Dyn *d = _DYNAMIC; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_SYMTAB) symtab = reinterpret_cast<Elf64_Sym *>(at(d->d_un.d_ptr));
		else if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char *>(at(d->d_un.d_ptr));
		else if (d->d_tag == DT_GNU_HASH) gnu_hash = reinterpret_cast<const uint32_t *>(at(d->d_un.d_ptr));
	}
	if (!symtab || !strtab || !gnu_hash)
		return false;
	Elf64_Sym *sym[entry_count];
	uintptr_t lo = ~uintptr_t(0), hi = 0;
	for (uint32_t i = 0; i < entry_count; i++) {
		sym[i] = gnu_lookup(symtab, strtab, gnu_hash, entry_name[i]);
		// Still this entry, as linked: nothing else rewrote it.
		const uintptr_t entry = uintptr_t(uarch_preload_entry_page) + i * entry_stride;
		if (!sym[i] || ELF64_ST_TYPE(sym[i]->st_info) != STT_FUNC || sym[i]->st_value != entry - bias ||
		    !targets[i])
			return false;
		lo = uintptr_t(sym[i]) < lo ? uintptr_t(sym[i]) : lo;
		hi = uintptr_t(sym[i] + 1) > hi ? uintptr_t(sym[i] + 1) : hi;
	}
	auto down = [page_size](uintptr_t a) { return a & ~(page_size - 1); };
	auto up = [down, page_size](uintptr_t a) { return down(a + page_size - 1); };
	lo = down(lo);
	hi = up(hi);
	// The segment that holds them: read-only, or writable, never executable
	// (with -z noseparate-code .dynsym shares the code's segment).
	const Elf64_Phdr *ph = program_headers();
	uint32_t flags = 0;
	bool inside = false;
	for (uint32_t i = 0; i < __ehdr_start.e_phnum && !inside; i++) {
		const uintptr_t from = bias + ph[i].p_vaddr, to = from + ph[i].p_memsz;
		if (ph[i].p_type == PT_LOAD && down(from) <= lo && hi <= up(to)) {
			inside = true;
			flags = ph[i].p_flags;
		}
	}
	if (!inside || (flags & PF_X))
		return false;
	// A writable segment: RELRO, still writable here, since ld.so protects
	// it only after this object's last relocation, the one whose resolver
	// calls this and whose result ld.so stores into RELRO itself.
	const bool writable = flags & PF_W;
	if (!writable && failed(sys::call6(sys::nr_mprotect, long(lo), long(hi - lo), prot_read | prot_write)))
		return false;
	// ld.so adds its bias to st_value; every variant lies in this object.
	for (uint32_t i = 0; i < entry_count; i++)
		__atomic_store_n(&sym[i]->st_value, uint64_t(uintptr_t(targets[i]) - bias), __ATOMIC_RELAXED);
	// Back to read-only. Should that fail the page stays writable, not
	// executable, and the symbols are bound all the same.
	if (!writable)
		sys::call6(sys::nr_mprotect, long(lo), long(hi - lo), prot_read);
	return true;
}

} // namespace

// Only from the load-time binding: the offsets lie in RELRO, writable
// only while ld.so relocates this library.
const State *bind_entries(uint64_t hwcap, uint64_t hwcap2)
{
	const State *st = state_build(hwcap, hwcap2, true);
	if (!st)
		return nullptr;   // every build slot busy: the portable variants stay
	for (uint32_t i = 0; i < entry_count; i++) {
		const uintptr_t to = uintptr_t(impl_fn(entry_op[i], st->plan.impl[entry_op[i]]));
		__atomic_store_n(&uarch_preload_off[i], int64_t(to - uintptr_t(&uarch_preload_off[i])), __ATOMIC_RELEASE);
	}
	__atomic_store_n(&g_pointers_set, 1, __ATOMIC_RELEASE);
	bind_api_at_load(st->plan);
	return st;
}

EntryBinding entry_binding()
{
	return __atomic_load_n(&g_pointers_set, __ATOMIC_ACQUIRE) ? EntryBinding::pointer : EntryBinding::unbound;
}

bool symbols_bound() { return __atomic_load_n(&g_symbols_bound, __ATOMIC_ACQUIRE); }

} // namespace uarch

// The load-time binding, an IRELATIVE relocation of this object, which
// ld.so applies after the GOT's (so the GOT that reaches getauxval and the
// loader's CPUID table is filled: x86-64's ld.so applies IRELATIVE ones
// last, arm64's in table order, where the linker puts them after the
// GLOB_DAT ones) and before it relocates the program. A resolver must not
// call through this object's PLT (not yet filled on arm64, nor in lazy
// mode): everything below calls hidden functions, raw system calls, and
// through the GOT (state.cpp's auxval()).
extern "C" {
static void uarch_preload_bound() {}

// Not static: clang looks an ifunc's resolver up by its (unmangled) name.
// arm64's loader passes AT_HWCAP, and a pointer to AT_HWCAP2 (bit 62).
#if defined(__aarch64__)
__attribute__((used, visibility("hidden"))) auto uarch_preload_load_resolver(uint64_t hwcap, const uint64_t *arg)
	-> void (*)()
{
	const uint64_t hwcap2 = (hwcap & (1ull << 62)) && arg ? arg[2] : 0;
#else
__attribute__((used, visibility("hidden"))) auto uarch_preload_load_resolver() -> void (*)()
{
	const uint64_t hwcap = 0, hwcap2 = 0;
#endif
	if (const uarch::State *st = uarch::bind_entries(hwcap, hwcap2)) {
#if !defined(UARCH_RECORD)   // the recorder's names count, then call the variants
		void *targets[uarch::entry_count];
		uarch::load_targets(targets);
		if (uarch::patch_symbols(targets, st->page_size))
			__atomic_store_n(&uarch::g_symbols_bound, 1, __ATOMIC_RELEASE);
#else
		(void)st;
#endif
	}
	__atomic_store_n(&uarch_preload_relocated, 1, __ATOMIC_RELEASE);
	return &uarch_preload_bound;
}

static void uarch_preload_load() __attribute__((ifunc("uarch_preload_load_resolver")));
// Its address, stored by an IRELATIVE relocation: what makes ld.so run the
// resolver.
__attribute__((used)) static void (*const uarch_preload_load_slot)() = &uarch_preload_load;
}


// What the preloaded library bound, under names of its own: the uarch_*
// API stays libuarch.so's alone (uarch_memcpy@UARCH_0 must never bind
// here, where an unversioned definition would satisfy it).
extern "C" {
__attribute__((visibility("default"))) const char *uarch_preload_impl(const char *op)
{
	return uarch_impl(op);
}

__attribute__((visibility("default"))) const char *uarch_preload_op(unsigned i)
{
	return uarch_op(i);
}
}
