import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that carries Coffer's macros.
@main
struct CofferMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [TableMacro.self, ColumnMacro.self]
}
