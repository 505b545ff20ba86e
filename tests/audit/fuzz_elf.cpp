// libFuzzer target: the ELF/archive reader, the classifier and the text,
// JSON and diff writers over arbitrary bytes. Every input must end in a report or an
// AuditError, never in a crash, a hang or an out-of-bounds read.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <vector>

#include "classify.h"
#include "elf_reader.h"
#include "report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	std::vector<std::uint8_t> image(data, data + size); // libelf may write to it
	try {
		std::vector<audit::ObjectReport> reports;
		for (const audit::ElfObject &obj : audit::read_elf(image, "fuzz"))
			reports.push_back(audit::classify(obj));
		std::ostringstream out;
		audit::print_json(out, reports);
		audit::print_text(out, reports, 5);
		audit::print_diff(out, "a", reports, "b", reports, false);
		audit::print_diff(out, "a", reports, "b", {}, true);
	} catch (const audit::AuditError &) {
	}
	return 0;
}
