// uarch-audit: disassembly and classification.
//
// capstone 4 (Debian 12) gives the length and the operands of an x86
// instruction, but not always its name: it calls umwait, tpause and
// umonitor "mfence", rep movsw "movsd", does not know mwaitx, and shares one
// id between the string movsd and the SSE movsd. So the x86 counters are
// decided from the prefix and opcode bytes, and capstone is asked only for
// lengths and operands. It knows no arm64 MOPS either: those are matched
// by their encoding.
#include "classify.h"

#include <set>

#include <algorithm>

#include <capstone/capstone.h>

namespace audit {

namespace {

constexpr std::array kX86Counters{
	Counter::rep_movsb,   Counter::rep_movsw,  Counter::rep_movsd,  Counter::rep_movsq,
	Counter::rep_stosb,   Counter::rep_stosw,  Counter::rep_stosd,  Counter::rep_stosq,
	Counter::rep_small,   Counter::mfence,     Counter::lfence,     Counter::sfence,
	Counter::lock_stack,  Counter::prefetcht0, Counter::prefetcht1, Counter::prefetcht2,
	Counter::prefetchnta, Counter::prefetchw,  Counter::pause,      Counter::umwait,
	Counter::tpause,      Counter::mwaitx,     Counter::no_vzeroupper};

constexpr std::array kArm64Counters{Counter::prfm,    Counter::dmb,   Counter::dsb,
                                    Counter::wfe,     Counter::yield, Counter::mops_cpy,
                                    Counter::mops_set};

// How far back (in instructions) a constant load of rcx is believed to be
// the count of a rep movs/stos: gcc puts it right before, or a few
// instructions earlier when it also sets up rdi/rsi/rax.
constexpr int kRcxWindow = 8;

Counter offset(Counter base, unsigned by)
{
	return static_cast<Counter>(static_cast<unsigned>(base) + by);
}

// One capstone handle with one instruction buffer.
class Disassembler {
public:
	explicit Disassembler(Arch arch)
	{
		const bool x86 = arch == Arch::x86_64;
		if (cs_open(x86 ? CS_ARCH_X86 : CS_ARCH_ARM64, x86 ? CS_MODE_64 : CS_MODE_ARM,
		            &h_) != CS_ERR_OK)
			throw AuditError("capstone cannot disassemble " +
			                 std::string(arch_name(arch)));
		if (x86) cs_option(h_, CS_OPT_DETAIL, CS_OPT_ON);
		insn_ = cs_malloc(h_);
	}
	~Disassembler()
	{
		cs_free(insn_, 1);
		cs_close(&h_);
	}
	Disassembler(const Disassembler &) = delete;
	Disassembler &operator=(const Disassembler &) = delete;

	// Decodes one instruction at code[0..size) (address addr), or returns null.
	const cs_insn *decode(const std::uint8_t *code, std::size_t size, std::uint64_t addr)
	{
		return cs_disasm_iter(h_, &code, &size, &addr, insn_) ? insn_ : nullptr;
	}
	bool in_group(const cs_insn *i, unsigned group) const
	{
		return cs_insn_group(h_, i, group);
	}

private:
	csh h_ = 0;
	cs_insn *insn_ = nullptr;
};

// The legacy and REX prefixes of an x86 instruction.
struct X86Prefixes {
	bool lock = false, rep = false, repne = false, opsize = false;
	std::uint8_t rex = 0;
	std::size_t len = 0;
};

X86Prefixes scan_prefixes(const std::uint8_t *b, std::size_t n)
{
	X86Prefixes p;
	std::size_t i = 0;
	for (; i < n; ++i) {
		const std::uint8_t c = b[i];
		if (c == 0xF0)
			p.lock = true;
		else if (c == 0xF2)
			p.repne = true;
		else if (c == 0xF3)
			p.rep = true;
		else if (c == 0x66)
			p.opsize = true;
		else if (c != 0x67 && c != 0x2E && c != 0x36 && c != 0x3E && c != 0x26 &&
		         c != 0x64 && c != 0x65)
			break;
	}
	if (i < n && (b[i] & 0xF0) == 0x40) p.rex = b[i++];
	p.len = i;
	return p;
}

bool is_rcx(unsigned reg)
{
	return reg == X86_REG_RCX || reg == X86_REG_ECX || reg == X86_REG_CX || reg == X86_REG_CL ||
	       reg == X86_REG_CH;
}

bool writes_rcx(const cs_insn *i)
{
	const cs_detail *d = i->detail;
	for (std::uint8_t k = 0; k < d->regs_write_count; ++k)
		if (is_rcx(d->regs_write[k])) return true;
	for (std::uint8_t k = 0; k < d->x86.op_count; ++k) {
		const cs_x86_op &op = d->x86.operands[k];
		if (op.type == X86_OP_REG && (op.access & CS_AC_WRITE) && is_rcx(op.reg))
			return true;
	}
	return false;
}

// True when i loads a constant into ecx/rcx (mov imm, xor ecx,ecx): *value is rcx after i.
bool rcx_constant(const cs_insn *i, std::uint64_t *value)
{
	const cs_x86 &x = i->detail->x86;
	if (x.op_count != 2 || x.operands[0].type != X86_OP_REG) return false;
	const unsigned reg = x.operands[0].reg;
	if (reg != X86_REG_ECX && reg != X86_REG_RCX) return false;
	const cs_x86_op &src = x.operands[1];
	if ((i->id == X86_INS_MOV || i->id == X86_INS_MOVABS) && src.type == X86_OP_IMM) {
		const auto v = static_cast<std::uint64_t>(src.imm);
		*value = reg == X86_REG_ECX ? v & 0xffffffffu : v;
		return true;
	}
	if ((i->id == X86_INS_XOR || i->id == X86_INS_SUB) && src.type == X86_OP_REG &&
	    src.reg == reg) {
		*value = 0;
		return true;
	}
	return false;
}

bool stack_memory_operand(const cs_insn *i)
{
	const cs_x86 &x = i->detail->x86;
	for (std::uint8_t k = 0; k < x.op_count; ++k)
		if (x.operands[k].type == X86_OP_MEM && (x.operands[k].mem.base == X86_REG_RSP ||
		                                         x.operands[k].mem.base == X86_REG_ESP))
			return true;
	return false;
}

// Does i write the upper half of ymm0-15 or zmm0-15 (what vzeroupper
// clears; zmm16-31 have no SSE counterpart and are left aside)? An
// operand whose access capstone does not know counts as written when it
// is the destination (the first, in Intel order).
bool writes_upper_vector(const cs_insn *i)
{
	const cs_x86 &x = i->detail->x86;
	for (std::uint8_t k = 0; k < x.op_count; ++k) {
		const cs_x86_op &o = x.operands[k];
		if (o.type != X86_OP_REG) continue;
		const bool upper = (o.reg >= X86_REG_YMM0 && o.reg <= X86_REG_YMM15) ||
		                   (o.reg >= X86_REG_ZMM0 && o.reg <= X86_REG_ZMM15);
		if (upper && ((o.access & CS_AC_WRITE) || (k == 0 && o.access == 0))) return true;
	}
	return false;
}

// The exits of code[0..size) (a function) that a path reaches with a
// ymm/zmm0-15 register written and no vzeroupper/vzeroall since: a
// forward data flow of one bit ("upper state dirty") over the decoded
// instructions, joined at the targets of direct jumps inside the range,
// repeated until nothing changes. An exit is a ret, or a jmp that leaves
// the range or is indirect (a tail call). Limits: calls are taken to
// return clean and are not followed; indirect jumps inside the function
// (jump tables) are taken as exits; bytes that do not decode end the
// fall-through path.
std::uint64_t count_missing_vzeroupper(Disassembler &dis, const std::uint8_t *code, std::size_t size,
                                       std::uint64_t addr)
{
	enum Kind : std::uint8_t { plain, writes, clears, exits, jump, branch };
	struct Insn {
		std::uint64_t at, target;
		Kind kind;
		bool falls_through;
	};
	std::vector<Insn> insns;
	bool any_write = false;
	for (std::size_t pos = 0; pos < size;) {
		const cs_insn *i = dis.decode(code + pos, size - pos, addr + pos);
		if (!i) {
			if (!insns.empty()) insns.back().falls_through = false;
			++pos;
			continue;
		}
		Insn n{addr + pos, 0, plain, true};
		const cs_x86 &x = i->detail->x86;
		const bool direct = x.op_count == 1 && x.operands[0].type == X86_OP_IMM;
		const std::uint64_t to = direct ? static_cast<std::uint64_t>(x.operands[0].imm) : 0;
		const bool inside = direct && to >= addr && to < addr + size;
		if (i->id == X86_INS_VZEROUPPER || i->id == X86_INS_VZEROALL) {
			n.kind = clears;
		} else if (writes_upper_vector(i)) {
			n.kind = writes;
			any_write = true;
		} else if (dis.in_group(i, CS_GRP_RET) || (i->id == X86_INS_JMP && !inside)) {
			n.kind = exits;
			n.falls_through = false;
		} else if (i->id == X86_INS_JMP) {
			n.kind = jump;
			n.target = to;
			n.falls_through = false;
		} else if (dis.in_group(i, CS_GRP_JUMP) && inside) {
			n.kind = branch;   // jcc, loop, jrcxz
			n.target = to;
		}
		insns.push_back(n);
		pos += i->size;
	}
	if (!any_write) return 0;
	std::set<std::uint64_t> dirty_targets;   // jumped to with dirty state
	std::uint64_t missing = 0;
	for (bool changed = true; changed;) {
		changed = false;
		missing = 0;
		bool dirty = false, reachable_by_fall = false;
		for (const Insn &n : insns) {
			dirty = (reachable_by_fall && dirty) || dirty_targets.count(n.at);
			if (n.kind == writes) dirty = true;
			if (n.kind == clears) dirty = false;
			if (n.kind == exits && dirty) ++missing;
			if ((n.kind == jump || n.kind == branch) && dirty)
				changed |= dirty_targets.insert(n.target).second;
			reachable_by_fall = n.falls_through;
		}
	}
	return missing;
}

void scan_x86(Disassembler &dis, const std::uint8_t *code, std::size_t size, std::uint64_t addr,
              std::uint64_t origin, Counts &c)
{
	bool rcx_known = false; // rcx holds a constant loaded in this range:
	std::uint64_t rcx = 0;  // this one,
	int rcx_age = 0;        // so many instructions ago
	std::size_t pos = 0;
	while (pos < size) {
		const std::uint8_t *b = code + pos;
		const std::size_t left = size - pos;
		const cs_insn *i = dis.decode(b, left, addr + pos);
		if (!i) {
			// capstone 4 does not know monitorx/mwaitx (0f 01 fa/fb).
			if (left >= 3 && b[0] == 0x0F && b[1] == 0x01 &&
			    (b[2] == 0xFA || b[2] == 0xFB)) {
				if (b[2] == 0xFB) ++c[Counter::mwaitx];
				++c.insns;
				pos += 3;
			} else {
				pos += 1; // data or padding: resynchronise on the next byte
			}
			rcx_known = false;
			continue;
		}
		++c.insns;
		if (rcx_age >= kRcxWindow) rcx_known = false;

		const X86Prefixes p = scan_prefixes(i->bytes, i->size);
		const std::uint8_t *op = i->bytes + p.len;
		const std::size_t oplen = i->size - p.len;
		const bool no_simd_prefix = !p.rep && !p.repne && !p.opsize;
		const auto o = [&](std::size_t k) -> int { return k < oplen ? op[k] : -1; };
		const int modrm = o(2);
		const unsigned modrm_reg = modrm >= 0 ? (static_cast<unsigned>(modrm) >> 3) & 7 : 8;
		bool string_op = false;

		if ((p.rep || p.repne) &&
		    (o(0) == 0xA4 || o(0) == 0xA5 || o(0) == 0xAA || o(0) == 0xAB)) {
			string_op = true;
			const bool byte_op = o(0) == 0xA4 || o(0) == 0xAA;
			const unsigned log2 = byte_op ? 0 : (p.rex & 8) ? 3 : p.opsize ? 1 : 2;
			const bool movs = o(0) == 0xA4 || o(0) == 0xA5;
			const Counter k =
			        offset(movs ? Counter::rep_movsb : Counter::rep_stosb, log2);
			++c[k];
			if (rcx_known) {
				RepSite site{"rep " + std::string(counter_name(k).substr(4)),
				             origin + pos, rcx, rcx << log2};
				if (site.small()) ++c[Counter::rep_small];
				c.reps.push_back(std::move(site));
			}
		} else if (o(0) == 0x0F && o(1) == 0xAE && modrm >= 0xC0) {
			// mfence/lfence/sfence share 0f ae with mod=3; with a 66 or f2
			// prefix the /6 form is tpause or umwait (f3: umonitor).
			if (no_simd_prefix && modrm_reg == 5) ++c[Counter::lfence];
			if (no_simd_prefix && modrm_reg == 6) ++c[Counter::mfence];
			if (no_simd_prefix && modrm_reg == 7) ++c[Counter::sfence];
			if (modrm_reg == 6 && p.repne && !p.rep && !p.opsize) ++c[Counter::umwait];
			if (modrm_reg == 6 && p.opsize && !p.rep && !p.repne) ++c[Counter::tpause];
		} else if (o(0) == 0x0F && o(1) == 0x01 && o(2) == 0xFB) {
			++c[Counter::mwaitx];
		} else if (o(0) == 0x0F && o(1) == 0x18 && modrm >= 0 && modrm < 0xC0 &&
		           modrm_reg < 4) {
			constexpr Counter hint[] = {Counter::prefetchnta, Counter::prefetcht0,
			                            Counter::prefetcht1, Counter::prefetcht2};
			++c[hint[modrm_reg]];
		} else if (o(0) == 0x0F && o(1) == 0x0D && modrm >= 0 && modrm < 0xC0 &&
		           modrm_reg == 1) {
			++c[Counter::prefetchw];
		} else if (o(0) == 0x90 && p.rep && !(p.rex & 1)) {
			++c[Counter::pause];
		}
		if (p.lock && stack_memory_operand(i)) ++c[Counter::lock_stack];


		// Track a constant count in rcx for the next rep movs/stos.
		if (rcx_constant(i, &rcx)) {
			rcx_known = true;
			rcx_age = 0;
		} else if (string_op || writes_rcx(i) || dis.in_group(i, CS_GRP_CALL) ||
		           dis.in_group(i, CS_GRP_RET) || i->id == X86_INS_JMP) {
			// changed, or the next instruction is reached from elsewhere
			rcx_known = false;
		} else {
			++rcx_age;
		}
		pos += i->size;
	}
}

// MOPS (FEAT_MOPS) CPY*/SET* P/M/E: size=00, bits 29:27=011, 25:24=01,
// 21=0, 11:10=01; op1 (23:22) is P/M/E for CPY and 11 for SET, where
// op2 bits 15:14 are P/M/E (11 is unallocated).
constexpr std::uint32_t kMopsMask = 0xFB200C00u, kMopsBits = 0x19000400u;

void scan_arm64(Disassembler &dis, const std::uint8_t *code, std::size_t size, std::uint64_t addr,
                Counts &c)
{
	for (std::size_t pos = 0; pos + 4 <= size; pos += 4) {
		const std::uint8_t *b = code + pos;
		const std::uint32_t w =
		        b[0] | b[1] << 8 | b[2] << 16 | static_cast<std::uint32_t>(b[3]) << 24;
		if ((w & kMopsMask) == kMopsBits) {
			const bool set = ((w >> 22) & 3) == 3;
			if (!set || ((w >> 14) & 3) != 3) {
				++c[set ? Counter::mops_set : Counter::mops_cpy];
				++c.insns;
				continue;
			}
		}
		const cs_insn *i = dis.decode(b, 4, addr + pos);
		if (!i) continue;
		++c.insns;
		switch (i->id) {
		case ARM64_INS_PRFM:
		case ARM64_INS_PRFUM: ++c[Counter::prfm]; break;
		case ARM64_INS_DMB: ++c[Counter::dmb]; break;
		case ARM64_INS_DSB: ++c[Counter::dsb]; break;
		case ARM64_INS_WFE: ++c[Counter::wfe]; break;
		case ARM64_INS_YIELD: ++c[Counter::yield]; break;
		default: break;
		}
	}
}

} // namespace

std::span<const Counter> counters_for(Arch a)
{
	if (a == Arch::x86_64) return kX86Counters;
	return kArm64Counters;
}

std::uint64_t Counts::flagged() const
{
	std::uint64_t sum = 0;
	for (std::size_t k = 0; k < kNumCounters; ++k)
		if (static_cast<Counter>(k) != Counter::rep_small) sum += n[k];
	return sum;
}

void Counts::add(const Counts &o)
{
	insns += o.insns;
	for (std::size_t k = 0; k < kNumCounters; ++k)
		n[k] += o.n[k];
}

ObjectReport classify(const ElfObject &obj)
{
	ObjectReport r{obj.name, obj.arch, obj.type, obj.built_by_clang, {}, {}};
	Disassembler dis(obj.arch);

	// Scans [from, to) of sec as part of key; origin is where key starts.
	const auto scan = [&](const CodeSection &sec, std::uint64_t from, std::uint64_t to,
	                      const std::string &key, std::uint64_t origin) {
		if (to <= from) return;
		Counts &c = r.functions[key];
		const std::uint8_t *code = sec.bytes.data() + from;
		if (obj.arch == Arch::x86_64) {
			scan_x86(dis, code, to - from, sec.addr + from, from - origin, c);
			c[Counter::no_vzeroupper] += count_missing_vzeroupper(dis, code, to - from, sec.addr + from);
		}
		else
			scan_arm64(dis, code, to - from, sec.addr + from, c);
	};

	for (const CodeSection &sec : obj.code) {
		const std::string bucket = "[" + sec.name + "]";
		std::uint64_t pos = 0;
		for (const Function &f : sec.functions) {
			scan(sec, pos, f.start, bucket, 0);
			const std::uint64_t end = f.start + f.size;
			scan(sec, std::max(pos, f.start), end, f.name, f.start);
			pos = std::max(pos, end);
		}
		scan(sec, pos, sec.bytes.size(), bucket, 0);
	}
	for (const auto &[name, c] : r.functions)
		r.totals.add(c);
	return r;
}

} // namespace audit
