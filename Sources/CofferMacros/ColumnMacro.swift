import SwiftSyntax
import SwiftSyntaxMacros

/// `@Column(...)` marks a stored property with column constraints. It expands to nothing: `@Table` reads
/// its arguments when it generates the table's column set.
public struct ColumnMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
